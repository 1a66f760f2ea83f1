"""Name what recovery left behind, in the words the lessons use.

A word is claimed only for a run whose workers did what the run planned: the first worker died
at the planned kill point (or ran to its end), the recovery ran to its end. Otherwise the run
is "failed", with the reason, and no outcome is claimed: the files show the worker's error,
not the commit window.
"""

from __future__ import annotations

from labkit.bench.failures import FAILED
from labkit.bench.snapshot import Snapshot
from labkit.language import Messages, say

__all__ = [
    "FAILED",
    "OUTCOMES",
    "classify",
    "describe_state",
    "outcome_name",
    "outcome_text",
    "state_word",
]

# What each outcome word means, in the reader's language (commit_window.toml)
OUTCOMES = Messages(
    "commit_window.outcome", ("consistent", "duplicate", "lost", "unfinished", FAILED)
)


def outcome_name(outcome: str) -> str:
    """An outcome code as the reader reads it: "duplicate" (重复 in Chinese); also the tool
    steps' "unknown". The code itself stays what `result.outcome` holds."""
    return say(f"commit_window.name.{outcome}")


def state_word(snapshot: Snapshot) -> str:
    """The word for what the files hold: duplicate, unfinished, consistent or lost."""
    if snapshot.receipts > 1:
        return "duplicate"
    if snapshot.done != 1:
        return "unfinished"
    return "consistent" if snapshot.receipts == 1 else "lost"


def describe_state(snapshot: Snapshot) -> str:
    """done and the receipts, and the word for them: "done=1 and 2 receipts (duplicate)"."""
    count = snapshot.receipts
    receipts = say(f"commit_window.receipts_{'one' if count == 1 else 'many'}", count=count)
    word = outcome_name(state_word(snapshot))
    return say("commit_window.state", done=snapshot.done, receipts=receipts, word=word)


def classify(after: Snapshot, failure: str | None) -> str:
    """One word for the state after recovery (see OUTCOMES for what each word means)."""
    return FAILED if failure else state_word(after)


def outcome_text(outcome: str, failure: str | None) -> str:
    """The outcome's name, and for a failed run why: "failed: first worker timed out"."""
    word = outcome_name(outcome)
    return say("commit_window.failed_because", word=word, failure=failure) if failure else word
