"""Name what a race left in the files: one winner, both ran, lost update, refused late write.

The receiver's file is the judge: its `applied` log (a trigger writes a row for every write
that changed the document, however it was made), its `refused` rows, and whether the document
ends under an older token than the task's newest claim (a stale write landed last).
"""

from __future__ import annotations

from labkit.bench.failures import FAILED
from labkit.bench.snapshot import Snapshot

__all__ = ["FAILED", "OUTCOMES", "classify", "race_counts"]

OUTCOMES = {
    "one_winner": "one worker wrote the document; the other never got the task",
    "both_ran": "both workers claimed the task and both wrote: the effect happened twice",
    "lost_update": "both wrote, and the stale worker's write landed last: the document holds "
    "an older token than the task's newest claim, the newer work is overwritten",
    "refused_late_write": "the stale worker came back and wrote with its old token; the "
    "receiver refused it: the newer work stands",
    "nobody": "no write reached the document",
    FAILED: "a worker did not do what the run planned (an error, a timeout): no outcome",
}


def race_counts(snapshot: Snapshot) -> dict[str, int]:
    """The few numbers a reader compares: writes applied and refused, the task's newest
    token, the token the document ends under."""
    (document,) = snapshot.table("document").rows
    (task,) = snapshot.table("task").rows
    return {
        "applied": len(snapshot.table("applied").rows),
        "refused": len(snapshot.table("refused").rows),
        "task_fence": task[3],
        "document_fence": document[3],
    }


def classify(snapshot: Snapshot) -> str:
    """One word for what the files hold (see OUTCOMES)."""
    counts = race_counts(snapshot)
    if counts["applied"] == 0:
        return "nobody"
    if counts["applied"] >= 2:
        stale = counts["document_fence"] < counts["task_fence"]
        return "lost_update" if stale else "both_ran"
    return "refused_late_write" if counts["refused"] else "one_winner"
