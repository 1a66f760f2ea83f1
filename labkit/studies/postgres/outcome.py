"""Name what a commit-window run on Postgres left: consistent, duplicate or lost.

Split from spec.py so the words have their own guard tests (tasks.py's GUARDS).
"""

from __future__ import annotations

__all__ = ["OUTCOMES", "outcome_of"]

OUTCOMES = ("consistent", "duplicate", "lost")


def outcome_of(done: int, receipts: int) -> str:
    """The run's word: one receipt and done=1 is consistent; two receipts a duplicate; done=1
    with no receipt a lost effect. (done=0 after recovery cannot happen: recovery finishes.)"""
    if receipts > 1:
        return "duplicate"
    return "consistent" if receipts == 1 and done == 1 else "lost"
