"""The commit-window timeline: a lane per process and per file, drawn from the trace.

Transactions are bars from BEGIN to COMMIT; the commit window is the shaded span between the
business commit (receipts) and the checkpoint commit (done=1) of one process, hatched where a
kill left it open; a kill is a cross where it happened. A vertical line marks the event a
frame is at.
"""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from labkit.language import Messages, say
from labkit.views.figures import figure_png, new_figure
from labkit.views.palette import FILE_COLOURS, KILL_COLOUR, NEUTRAL, WINDOW_COLOUR

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
        self.fig, self.axes = build_figure(events)
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


def build_figure(events: list[dict]) -> tuple[Figure, dict[str, Axes]]:
    """One panel per process, sharing the lanes: the process itself, then each file."""
    roles = [r for r in ROLES if any(e["role"] == r for e in events)]
    created = next((e for e in events if e["event"] == "created"), None)
    files = sorted(created["rows"] if created else {e["file"] for e in events if e.get("file")})
    y = {None: len(files) + 1, **{f: len(files) - i for i, f in enumerate(files)}}
    # A bare Figure, not pyplot: nothing is shown or kept behind the caller's back.
    fig = new_figure((10, 0.6 * len(y) + 1.7))
    axes = fig.subplots(1, len(roles), sharey=True, squeeze=False)
    for ax, role in zip(axes[0], roles, strict=True):
        draw_process(ax, [e for e in events if e["role"] == role], y)
        ax.set_title(say(f"timeline.role.{role}"), fontsize=10)
    axes[0][0].set_yticks(list(y.values()))
    axes[0][0].set_yticklabels([say("timeline.process"), *map(lane_name, files)])
    axes[0][0].set_ylim(0.4, len(y) + 1.0)
    handles = {h.get_label(): h for ax in axes[0] for h in ax.get_legend_handles_labels()[0]}
    if handles:
        fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=2, fontsize=8)
    fig.supxlabel(
        say("timeline.x_label"),
        fontsize=9,
        y=0.1 if handles else 0.02,
    )
    fig.tight_layout(rect=(0, 0.1 if handles else 0, 1, 1))
    return fig, dict(zip(roles, axes[0], strict=True))


def ms_since(event: dict, events: list[dict], role: str) -> float:
    start = next(e["t_ns"] for e in events if e["role"] == role)
    return (event["t_ns"] - start) / 1e6


def draw_process(ax: Axes, mine: list[dict], y: dict[str | None, int]) -> None:
    """One process's transactions, commits, kill points, kill and commit window."""

    def ms(e: dict | int) -> float:
        return ((e["t_ns"] if isinstance(e, dict) else e) - mine[0]["t_ns"]) / 1e6

    ax.plot([0, ms(mine[-1])], [y[None]] * 2, color="#BBBBBB", lw=1, zorder=0)  # lifetime
    for window in commit_windows(mine):
        # A window the kill left open is hatched in the kill's colour: told apart without colour.
        ax.axvspan(
            ms(window["start"]),
            ms(window["end"]),
            facecolor=WINDOW_COLOUR + "80",  # half transparent
            edgecolor=KILL_COLOUR if window["open"] else "none",
            hatch="///" if window["open"] else None,
            linewidth=0,
            label=say("timeline.window_open" if window["open"] else "timeline.window_closed"),
        )
    begun: dict[str, dict] = {}
    for e in mine:
        if e["event"] == "begin":
            begun[e["file"]] = e
        elif e["event"] in ("commit", "rollback"):
            start = begun.pop(e["file"])
            ax.plot(
                [ms(start), ms(e)],
                [y[e["file"]]] * 2,
                lw=8,
                solid_capstyle="butt",
                color=FILE_COLOURS.get(e["file"], NEUTRAL),
            )
            ax.plot(ms(e), y[e["file"]], "D", color="black", ms=6)
            what = " + ".join(w["table"] for w in e.get("writes", ())) or say("timeline.no_change")
            label = (
                say("timeline.commit", what=what)
                if e["event"] == "commit"
                else say("timeline.rollback")
            )
            ax.annotate(
                label, (ms(e), y[e["file"]]), xytext=(-4, 8), fontsize=8, textcoords="offset points"
            )
        elif e["event"] == "point":
            ax.plot(ms(e), y[None], "|", color="#555555", ms=14)
            ax.annotate(
                e["point"],
                (ms(e), y[None]),
                xytext=(-2, 10),
                rotation=35,
                textcoords="offset points",
                fontsize=7,
                color="#555555",
            )
        elif e["event"] in ("skip", "exit"):
            label = (
                say("timeline.skip")
                if e["event"] == "skip"
                else say("timeline.exit", code=e["code"])
            )
            ax.plot(ms(e), y[None], "o", color="#555555", ms=6)
            offset = (-10, -16) if e["event"] == "skip" else (-6, 8)  # they come close: split
            ax.annotate(
                label, (ms(e), y[None]), xytext=offset, fontsize=8, textcoords="offset points"
            )
        elif e["event"] == "kill":
            how = "os._exit(91)" if e["mode"] == "exit" else "SIGKILL"
            ax.plot(ms(e), y[None], "X", color=KILL_COLOUR, ms=13)
            ax.annotate(
                say("timeline.kill", how=how, point=e["point"]),
                (ms(e), y[None]),
                xytext=(-30, -16),
                textcoords="offset points",
                color=KILL_COLOUR,
                fontsize=8,
                fontweight="bold",
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1},  # over the hatching
            )
    for file, e in begun.items():  # a transaction that never ended: the process died inside
        ax.plot(
            [ms(e), ms(mine[-1])],
            [y[file]] * 2,
            lw=8,
            alpha=0.35,
            solid_capstyle="butt",
            color=FILE_COLOURS.get(file, NEUTRAL),
        )
        ax.annotate(
            say("timeline.never_committed"),
            (ms(e), y[file]),
            xytext=(0, 8),
            fontsize=8,
            textcoords="offset points",
        )
    ax.grid(axis="x", alpha=0.3)
    ax.margins(x=0.15)
