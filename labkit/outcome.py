"""Name what recovery left behind, in the words the lessons use."""

from __future__ import annotations

from labkit.launcher import WorkerReport
from labkit.snapshot import Snapshot

__all__ = ["OUTCOMES", "classify"]

OUTCOMES = {
    "consistent": "done=1 and one receipt: the effect happened once and the workflow knows it",
    "duplicate": "more than one receipt: recovery ran the business effect again",
    "lost": "done=1 but no receipt: the workflow says finished, the business never saw it",
    "unfinished": "done=0 after recovery: the workflow still has the step to do",
    "recovery_failed": "the recovery worker did not finish cleanly: read its stderr",
}


def classify(after: Snapshot, recovery: WorkerReport) -> str:
    """One word for the state after recovery (see OUTCOMES for what each word means)."""
    if recovery.exit_code != 0:
        return "recovery_failed"
    if after.receipts > 1:
        return "duplicate"
    if after.done != 1:
        return "unfinished"
    return "consistent" if after.receipts == 1 else "lost"
