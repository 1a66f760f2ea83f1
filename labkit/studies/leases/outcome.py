"""Name what a race left in the files: one winner, both ran, lost update, refused late write.

The receiver's file is the judge: its `applied` log (a row for every write that changed the
document, with the token it came with; for a reader's receiver the lab reads the document
after the call) and its `refused` rows. Tokens come from the claims: a stale worker's is lower
than its replacement's.
"""

from __future__ import annotations

from labkit.bench.failures import FAILED
from labkit.bench.snapshot import Snapshot
from labkit.language import Messages

__all__ = ["FAILED", "OUTCOMES", "classify", "race_counts"]

# What each outcome word means, in the reader's language (leases.toml)
OUTCOMES = Messages(
    "leases.outcomes",
    ("one_winner", "both_ran", "lost_update", "refused_late_write", "nobody", FAILED),
)


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
    """One word for what the files hold (see OUTCOMES). A lost update: the last write that
    changed the document carries a lower token than a write applied before it."""
    applied = [row[2] for row in snapshot.table("applied").rows]  # each write's token, in order
    if not applied:
        return "nobody"
    if len(applied) >= 2:
        return "lost_update" if applied[-1] < max(applied) else "both_ran"
    return "refused_late_write" if snapshot.table("refused").rows else "one_winner"
