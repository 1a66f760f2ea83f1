"""Name what recovery left behind, as a code ("duplicate"); its words are the view's
(`labkit.views.commit_window_words`).

A word is claimed only for a run whose workers did what the run planned: the first worker died
at the planned kill point (or ran to its end), the recovery ran to its end. Otherwise the run
is "failed", with the reason, and no outcome is claimed: the files show the worker's error,
not the commit window.
"""

from __future__ import annotations

from labkit.bench.failures import FAILED
from labkit.bench.snapshot import Snapshot

__all__ = ["FAILED", "OUTCOME_CODES", "classify", "state_word"]

# The outcome codes a run is given (what each means: the view's OUTCOMES)
OUTCOME_CODES = ("consistent", "duplicate", "lost", "unfinished", FAILED)


def state_word(snapshot: Snapshot) -> str:
    """The word for what the files hold: duplicate, unfinished, consistent or lost."""
    if snapshot.receipts > 1:
        return "duplicate"
    if snapshot.done != 1:
        return "unfinished"
    return "consistent" if snapshot.receipts == 1 else "lost"


def classify(after: Snapshot, failure: dict | None) -> str:
    """One code for the state after recovery (OUTCOME_CODES)."""
    return FAILED if failure else state_word(after)
