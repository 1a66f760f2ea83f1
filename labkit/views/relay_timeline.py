"""The outbox's timeline, in the lessons' one timeline (`lanes`): a lane each for the producer,
the relay and the consumer; each process a line from its start to its end with its name, its
transactions as bars, each delivery an arrow from the relay to the consumer it started, a kill
as a cross with the word SIGKILL.
"""

from __future__ import annotations

from labkit.language import say
from labkit.views.lanes import Arrow, Bar, Mark, Panel, Timeline
from labkit.views.palette import STORES
from labkit.views.text import process_name

__all__ = ["relay_timeline"]

LANES = ("producer", "relay", "consumer")  # top to bottom


def lane_of(role: str) -> str | None:
    """The lane a process is drawn in: the producer, a relay (first or recovering), a consumer."""
    if "consumer" in role:
        return "consumer"
    return {"producer": "producer", "relay": "relay", "recovery": "relay"}.get(role)


def relay_timeline(trace: list[dict]) -> Timeline:
    """An outbox run's trace as a Timeline."""
    events = [e for e in trace if lane_of(e["role"])]
    start = events[0]["t_ns"] if events else 0

    def ms(event: dict) -> float:
        return (event["t_ns"] - start) / 1e6

    panel = Panel()
    processes: dict[int, list[dict]] = {}
    for e in events:
        processes.setdefault(e["pid"], []).append(e)
    for mine in processes.values():
        draw_process(panel, mine, lane_of(mine[0]["role"]), ms)
    for e in events:
        if e["event"] == "deliver":
            to = next(
                (
                    c
                    for c in events
                    if c["event"] == "start"
                    and c["t_ns"] > e["t_ns"]
                    and lane_of(c["role"]) == "consumer"
                ),
                None,
            )
            if to is not None:
                panel.arrows.append(Arrow("relay", ms(e), "consumer", ms(to)))
    lanes = [(k, say(f"outbox.timeline.{k}")) for k in LANES]
    return Timeline(lanes, [panel], say("outbox.timeline.x_label"))


def draw_process(panel: Panel, mine: list[dict], lane: str, ms: object) -> None:
    """One process in its lane: its lifetime, transactions, kill points, and how it ended."""
    panel.lives.append((lane, ms(mine[0]), ms(mine[-1])))
    panel.marks.append(Mark(lane, ms(mine[0]), "note", process_name(mine[0]["role"])))
    begun: dict[str, dict] = {}
    for e in mine:
        if e["event"] == "begin":
            begun[e["file"]] = e
        elif e["event"] == "commit":
            meaning = STORES.get(e["file"], "neutral")
            legend = say("outbox.timeline.transaction", file=e["file"])
            panel.bars.append(Bar(lane, ms(begun.pop(e["file"])), ms(e), meaning, legend))
            what = " + ".join(w["table"] for w in e["writes"])
            what = what or say("outbox.timeline.nothing_new")
            said = say("outbox.timeline.commit", what=what)
            panel.marks.append(Mark(lane, ms(e), "commit", said))
        elif e["event"] in ("point", "seen", "unconfirmed"):
            said = e.get("point") if e["event"] == "point" else say(f"outbox.timeline.{e['event']}")
            panel.marks.append(Mark(lane, ms(e), "point", said))
        elif e["event"] == "kill":
            said = say("outbox.timeline.kill", point=e["point"])
            panel.marks.append(Mark(lane, ms(e), "kill", said))
    for file, e in begun.items():  # a transaction that never ended: the process died inside
        meaning = STORES.get(file, "neutral")
        panel.bars.append(Bar(lane, ms(e), ms(mine[-1]), meaning, faded=True))
        panel.marks.append(Mark(lane, ms(e), "note", say("outbox.timeline.never_committed")))
