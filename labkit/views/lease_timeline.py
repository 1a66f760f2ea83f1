"""Lesson 6's race, in the lessons' one timeline (`lanes`): a lane per worker on the lab's
clock, each won claim's lease a bar to its expiry (a renewal extends it, hatched), the pause
shaded, claims, writes and done marks with their tokens; a refused one is a cross.

Events at the same lab time are drawn a little apart, in the order they happened.
"""

from __future__ import annotations

from labkit.language import say
from labkit.studies.leases.experiment import ClaimResult
from labkit.views.lanes import Bar, Mark, Panel, Span, Timeline

__all__ = ["claim_timeline"]

LANES = ("w1", "w2")  # top to bottom
MARKS = {  # an event's words when it went through and when it was refused
    "claim": ("won", ("claim", "claim_held")),
    "write": ("applied", ("write", "write_refused")),
    "done": ("marked", ("done", "done_refused")),
    "renew": ("held", ("renew", "renew_refused")),
}


def claim_timeline(r: ClaimResult, title: str) -> Timeline:
    """A race's trace as a Timeline, under `title`."""
    events = [e for e in r.trace() if "lab_ms" in e]
    span = max([r.spec.pause_ms, r.spec.arrival_ms + r.spec.lease_ms, 1])
    seen: dict[tuple[str, int], int] = {}

    def placed(event: dict) -> float:
        """Its x, nudged after the events drawn at the same lab time."""
        key = (event["role"], event["lab_ms"])
        n = seen[key] = seen.get(key, -1) + 1
        return event["lab_ms"] + n * span * 0.03

    panel = Panel()
    stop = next((e for e in events if e["event"] == "stop"), None)
    cont = next((e for e in events if e["event"] == "cont"), None)
    if stop:
        end = cont["lab_ms"] if cont else span
        frozen = say("leases.timeline.frozen", ms=end - stop["lab_ms"])
        panel.spans.append(Span(stop["lab_ms"], end, "neutral", frozen, "..", "neutral", ("w1",)))
    for e in events:
        if e["role"] == "lab":
            if e["event"] == "clock" and e["lab_ms"] == r.spec.arrival_ms:
                panel.rules.append(e["lab_ms"])
            continue
        lane = e["role"]
        if e["event"] == "claim" and e["won"] and r.spec.leased:
            until = e["lab_ms"] + e["lease_ms"]
            panel.bars.append(Bar(lane, e["lab_ms"], until, "held"))
            expires = say("leases.timeline.expires", fence=e["fence"], until=until)
            panel.marks.append(Mark(lane, until, "expiry", expires))
        if e["event"] == "renew" and e["held"]:
            renewed = say("leases.timeline.renewed")
            end = e["lab_ms"] + e["lease_ms"]
            panel.bars.append(Bar(lane, e["lab_ms"], end, "held", renewed, hatch="//"))
        if e["event"] in MARKS:
            field, (ok, refused) = MARKS[e["event"]]
            went = bool(e.get(field))
            said = say(f"leases.timeline.{ok if went else refused}", fence=e.get("fence"))
            panel.marks.append(Mark(lane, placed(e), e["event"] if went else "refused", said))
    lanes = [(k, say(f"leases.timeline.worker_{k[1]}")) for k in LANES]
    return Timeline(lanes, [panel], say("leases.timeline.x_label"), title)
