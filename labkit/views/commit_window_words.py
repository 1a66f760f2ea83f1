"""Study 000's words: an outcome's name and meaning, what the files hold, what each write order
does, in the reader's language (commit_window.toml).

The study (`labkit.studies.commit_window.outcome`, `.orders`) keeps the codes: "duplicate",
"effect_first", done and the receipts counted; the words are said from them here.
"""

from __future__ import annotations

from labkit.bench.snapshot import Snapshot
from labkit.language import Messages, say
from labkit.language.failures import failure_text
from labkit.studies.commit_window.orders import WriteOrder
from labkit.studies.commit_window.outcome import OUTCOME_CODES, state_word

__all__ = ["OUTCOMES", "describe_state", "order_summary", "outcome_name", "outcome_text"]

# What each outcome code means, in the reader's language (lk.OUTCOMES)
OUTCOMES = Messages("commit_window.outcome", OUTCOME_CODES)


def outcome_name(outcome: str) -> str:
    """An outcome code as the reader reads it: "duplicate" (重复 in Chinese); also the tool
    steps' "unknown". The code itself stays what `result.outcome` holds."""
    return say(f"commit_window.name.{outcome}")


def describe_state(snapshot: Snapshot) -> str:
    """done and the receipts, and the word for them: "done=1 and 2 receipts (duplicate)"."""
    count = snapshot.receipts
    receipts = say(f"commit_window.receipts_{'one' if count == 1 else 'many'}", count=count)
    word = outcome_name(state_word(snapshot))
    return say("commit_window.state", done=snapshot.done, receipts=receipts, word=word)


def outcome_text(outcome: str, failure: dict | str | None) -> str:
    """The outcome's name, and for a failed run why: "failed: first worker timed out"."""
    word = outcome_name(outcome)
    return (
        say("commit_window.failed_because", word=word, failure=failure_text(failure))
        if failure
        else word
    )


def order_summary(order: WriteOrder) -> str:
    """What a write order does ("commit the receipt in effect.db, then done=1 ...")."""
    return say(f"commit_window.order.{order.name}")
