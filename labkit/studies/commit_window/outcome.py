"""Name what recovery left behind, in the words the lessons use.

A word is claimed only for a run whose workers did what the run planned: the first worker died
at the planned kill point (or ran to its end), the recovery ran to its end. Otherwise the run
is "failed", with the reason, and no outcome is claimed: the files show the worker's error,
not the commit window.
"""

from __future__ import annotations

from labkit.bench.failures import FAILED
from labkit.bench.snapshot import Snapshot

__all__ = [
    "FAILED",
    "OUTCOMES",
    "classify",
    "describe_state",
    "outcome_text",
    "state_word",
]

OUTCOMES = {
    "consistent": "done=1 and one receipt: the effect happened once and the workflow knows it",
    "duplicate": "more than one receipt: recovery ran the business effect again",
    "lost": "done=1 but no receipt: the workflow says finished, the business never saw it",
    "unfinished": "done=0 after recovery: the workflow still has the step to do",
    FAILED: "a worker did not do what the run planned (an error or a timeout): no outcome",
}


def state_word(snapshot: Snapshot) -> str:
    """The word for what the files hold: duplicate, unfinished, consistent or lost."""
    if snapshot.receipts > 1:
        return "duplicate"
    if snapshot.done != 1:
        return "unfinished"
    return "consistent" if snapshot.receipts == 1 else "lost"


def describe_state(snapshot: Snapshot) -> str:
    """done and the receipts, and the word for them: "done=1 and 2 receipts (duplicate)"."""
    receipts = f"{snapshot.receipts} receipt{'s' * (snapshot.receipts != 1)}"
    return f"done={snapshot.done} and {receipts} ({state_word(snapshot)})"


def classify(after: Snapshot, failure: str | None) -> str:
    """One word for the state after recovery (see OUTCOMES for what each word means)."""
    return FAILED if failure else state_word(after)


def outcome_text(outcome: str, failure: str | None) -> str:
    """The outcome word, and for a failed run why: "failed: first worker timed out after 0.5 s"."""
    return f"{outcome}: {failure}" if failure else outcome
