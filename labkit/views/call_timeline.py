"""Lesson 5's call timeline, in the lessons' one timeline (`lanes`): the first caller, the
recovering caller and the ticket service on one clock (the trace's CLOCK_MONOTONIC).

Each call is a bar from invoke to its answer, coloured and named by its Jepsen type (an `info`
bar is hatched: no answer came), with an arrow to the request the service received; the
service's requests and commits are marks, the caller's checkpoint of its intent a square, a
kill a cross.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from labkit.language import say
from labkit.studies.unknown_outcome.experiment import CallResult
from labkit.views.call_text import call_status, op_text
from labkit.views.lanes import Arrow, Bar, Mark, Panel, Timeline
from labkit.views.lanes_drawing import draw

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["timeline_figure"]

LANES = ("caller", "recovery", "service")  # top to bottom
LANE_NAMES = ("first_caller", "recovering_caller", "ticket_service")
JEPSEN = {"ok": "held", "fail": "fail", "info": "info"}  # a Jepsen type's meaning (palette)
SERVICE_LABELS = {  # a service event's label: its message in unknown_outcome.toml's [timeline]
    "request": None,  # its f and key: codes
    "working": "still_working",
    "commit": "commit",
    "original": "again",
    "holding reply": "holds_reply",
    "reply": "reply",
    "reply lost": "reply_lost",
    "refused": "refused",
}


def lane(event: dict) -> str:
    return "service" if event["role"].startswith("service") else event["role"]


def service_label(event: dict) -> str:
    """A service event in a few words: a request is its f and key, the rest come from the
    catalogue (a commit and a returned original name their ticket)."""
    if event["event"] == "request":
        asked = say(f"text.op_f.{event['f']}")
        return f"{asked} {event['op_key'].rsplit(':', 1)[-1]}"
    return say(
        f"unknown_outcome.timeline.{SERVICE_LABELS[event['event']]}", ticket=event.get("ticket")
    )


def timeline_figure(result: CallResult) -> Figure:
    """The call's timeline as a matplotlib Figure."""
    return draw(call_timeline(result))[0]


def call_timeline(result: CallResult) -> Timeline:
    events = [e for e in result.events() if e["role"] in LANES or lane(e) == "service"]
    start = min(e["t_ns"] for e in events)

    def ms(t_ns: int) -> float:
        return (t_ns - start) / 1e6

    panel = Panel()
    ends = {}
    for e in events:
        ends[lane(e)] = max(ends.get(lane(e), 0.0), ms(e["t_ns"]))
    panel.lives.extend((role, 0.0, end) for role, end in ends.items())
    requests = [e for e in events if lane(e) == "service" and e["event"] == "request"]
    for op in result.ops:
        begin = ms(op["start_ns"])
        end = ms(op["end_ns"]) if op["end_ns"] else ends[op["process"]]
        meaning = say(f"unknown_outcome.jepsen_short.{op['type']}")
        legend = say("unknown_outcome.timeline.legend", type=op["type"], meaning=meaning)
        hatch = "//" if op["type"] == "info" else None
        panel.bars.append(Bar(op["process"], begin, end, JEPSEN[op["type"]], legend, hatch))
        panel.marks.append(Mark(op["process"], begin, "note", op_text(op)))
        asked = next((r for r in requests if r["t_ns"] >= op["start_ns"]), None)
        if asked is not None and asked.get("f") == op["f"]:
            requests.remove(asked)
            panel.arrows.append(Arrow(op["process"], begin, "service", ms(asked["t_ns"])))
    for e in events:
        where, x = lane(e), ms(e["t_ns"])
        if e["event"] == "kill":
            how = "os._exit(91)" if e.get("mode") == "exit" else "SIGKILL"
            said = say("unknown_outcome.timeline.kill", how=how, point=e["point"])
            panel.marks.append(Mark(where, x, "kill", said))
        elif where == "service" and e["event"] in SERVICE_LABELS:
            meaning = "commit" if e["event"] == "commit" else "request"
            panel.marks.append(Mark("service", x, meaning, service_label(e)))
        elif e["event"] == "checkpoint":
            said = say("unknown_outcome.timeline.intent", status=call_status(e["status"]))
            panel.marks.append(Mark(where, x, "checkpoint", said))
    names = [say(f"unknown_outcome.timeline.{n}") for n in LANE_NAMES]
    lanes = list(zip(LANES, names, strict=True))
    return Timeline(lanes, [panel], say("unknown_outcome.timeline.x_label"))
