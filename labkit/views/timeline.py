"""The commit-window timeline: a lane for the process and one per file, a panel per process on
its own clock, drawn from the trace by the lessons' one timeline (`lanes`).

Transactions are bars from BEGIN to COMMIT; the commit window is the shaded span between the
business commit (receipts) and the checkpoint commit (done=1) of one process, hatched where a
kill left it open; a kill is a cross where it happened. A vertical line marks the event a
frame is at.
"""

from __future__ import annotations

from labkit.language import Messages, say
from labkit.views.figures import figure_png
from labkit.views.lanes import Bar, Mark, Panel, Span, Timeline
from labkit.views.lanes_drawing import draw
from labkit.views.palette import STORES

__all__ = ["TimelineFigure", "commit_windows"]

ROLES = ("first", "recovery")  # the processes drawn, each in a panel of its own
# a lane that is a Postgres session, not a file (lesson 7): named in the reader's words
SESSIONS = Messages("timeline.session", ("business", "checkpoints"))


def lane_name(lane: str) -> str:
    """A file's lane is its file's name ("effect.db"); a Postgres session's is said in words."""
    return SESSIONS.get(lane, lane)


def commit_windows(events: list[dict]) -> list[dict]:
    """Per process: the span from its commit to one store to its commit to the other, during
    which a crash leaves the two files disagreeing.

    A process killed after the first of its two commits leaves the window open up to the kill.
    A process that commits to one store only and exits (a recovery whose receipt was already
    there commits the checkpoint alone) has no second commit, so no window."""
    windows = []
    for role in ROLES:
        mine = [e for e in events if e["role"] == role]
        commits = [e for e in mine if e["event"] == "commit" and e["writes"]]
        tables = [{w["table"] for w in c["writes"]} for c in commits]
        if not commits or tables[0] == {"receipts", "progress"}:
            continue  # nothing committed, or both writes in one transaction: no window
        closing = next(
            (c for c, t in zip(commits[1:], tables[1:], strict=True) if t != tables[0]), None
        )
        end = closing or next((e for e in mine if e["event"] == "kill"), None)
        if end is not None:
            windows.append(
                {
                    "role": role,
                    "start": commits[0]["t_ns"],
                    "end": end["t_ns"],
                    "open": closing is None,
                }
            )
    return windows


class TimelineFigure:
    """The figure drawn once; `at(i)` only moves the dashed cursor, so scrubbing stays fast."""

    def __init__(self, events: list[dict]) -> None:
        self.events = events
        timeline = commit_timeline(events)
        self.fig, axes = draw(timeline)
        roles = [r for r in ROLES if any(e["role"] == r for e in events)]
        self.axes = dict(zip(roles, axes, strict=True))
        self.cursors = {
            role: ax.axvline(0, color="black", lw=1, ls="--", visible=False)
            for role, ax in self.axes.items()
        }
        self._png: dict[int | None, bytes] = {}

    def at(self, index: int | None) -> TimelineFigure:
        """Put the cursor on event `index` (None: no cursor)."""
        for role, cursor in self.cursors.items():
            here = index is not None and self.events[index]["role"] == role
            cursor.set_visible(here)
            if here:
                cursor.set_xdata([ms_since(self.events[index], self.events, role)] * 2)
        return self

    def png(self, index: int | None) -> bytes:
        """The figure with the cursor on event `index`, as PNG bytes (cached per index)."""
        if index not in self._png:
            self._png[index] = figure_png(self.at(index).fig)
        return self._png[index]


def commit_timeline(events: list[dict]) -> Timeline:
    """One panel per process, sharing the lanes: the process itself, then each file."""
    roles = [r for r in ROLES if any(e["role"] == r for e in events)]
    created = next((e for e in events if e["event"] == "created"), None)
    files = sorted(created["rows"] if created else {e["file"] for e in events if e.get("file")})
    lanes = [("process", say("timeline.process")), *((f, lane_name(f)) for f in files)]
    panels = []
    for role in roles:
        mine = [e for e in events if e["role"] == role]
        panel = Panel(title=say(f"timeline.role.{role}"))
        process_panel(panel, mine)
        panels.append(panel)
    return Timeline(lanes, panels, say("timeline.x_label"))


def ms_since(event: dict, events: list[dict], role: str) -> float:
    start = next(e["t_ns"] for e in events if e["role"] == role)
    return (event["t_ns"] - start) / 1e6


def process_panel(panel: Panel, mine: list[dict]) -> None:
    """One process's transactions, commits, kill points, kill and commit window."""

    def ms(e: dict | int) -> float:
        return ((e["t_ns"] if isinstance(e, dict) else e) - mine[0]["t_ns"]) / 1e6

    panel.lives.append(("process", 0.0, ms(mine[-1])))
    for window in commit_windows(mine):
        # A window the kill left open is hatched in the kill's colour: told apart without colour.
        is_open = window["open"]
        panel.spans.append(
            Span(
                ms(window["start"]),
                ms(window["end"]),
                "window",
                say("timeline.window_open" if is_open else "timeline.window_closed"),
                hatch="///" if is_open else None,
                edge="kill" if is_open else None,
            )
        )
    begun: dict[str, dict] = {}
    for e in mine:
        x = ms(e)
        if e["event"] == "begin":
            begun[e["file"]] = e
        elif e["event"] in ("commit", "rollback"):
            meaning = STORES.get(e["file"], "neutral")
            panel.bars.append(Bar(e["file"], ms(begun.pop(e["file"])), x, meaning))
            what = " + ".join(w["table"] for w in e.get("writes", ())) or say("timeline.no_change")
            said = say("timeline.commit", what=what) if e["event"] == "commit" else None
            panel.marks.append(Mark(e["file"], x, "commit", said or say("timeline.rollback")))
        elif e["event"] == "point":
            panel.marks.append(Mark("process", x, "point", e["point"]))
        elif e["event"] == "skip":
            panel.marks.append(Mark("process", x, "exit", say("timeline.skip")))
        elif e["event"] == "exit":
            panel.marks.append(Mark("process", x, "exit", say("timeline.exit", code=e["code"])))
        elif e["event"] == "kill":
            how = "os._exit(91)" if e["mode"] == "exit" else "SIGKILL"
            said = say("timeline.kill", how=how, point=e["point"])
            panel.marks.append(Mark("process", x, "kill", said))
    for file, e in begun.items():  # a transaction that never ended: the process died inside
        meaning = STORES.get(file, "neutral")
        panel.bars.append(Bar(file, ms(e), ms(mine[-1]), meaning, faded=True))
        panel.marks.append(Mark(file, ms(e), "note", say("timeline.never_committed")))
