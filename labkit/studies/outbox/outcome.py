"""Name what an outbox run left in the files: consistent, duplicate, lost, or nothing.

The consumer's `effects` table is the judge: a message of the outbox whose effect took place
more than once is a duplicate, one whose effect never took place is lost (so is an order that
never got its outbox row). Split from experiment.py so the words have their own guard tests.
"""

from __future__ import annotations

from collections import Counter

from labkit.bench.failures import FAILED
from labkit.bench.snapshot import Snapshot
from labkit.language import Messages

__all__ = ["OUTBOX_OUTCOMES", "outbox_counts", "outbox_state_word"]

OUTBOX_OUTCOMES = Messages(
    "outbox.outcomes", ("consistent", "duplicate", "lost", "nothing", FAILED)
)


def outbox_counts(snapshot: Snapshot) -> dict[str, int]:
    """The few numbers a reader compares: orders, outbox rows and how many are marked sent,
    effects at the consumer, inbox rows."""
    outbox = snapshot.table("outbox").rows
    return {
        "orders": len(snapshot.table("orders").rows),
        "outbox": len(outbox),
        "sent": sum(row[3] for row in outbox),
        "effects": len(snapshot.table("effects").rows),
        "inbox": len(snapshot.table("inbox").rows),
    }


def outbox_state_word(snapshot: Snapshot) -> str:
    """The word for what the files hold (see OUTBOX_OUTCOMES), message by message."""
    effects = Counter(row[1] for row in snapshot.table("effects").rows)
    messages = [row[1] for row in snapshot.table("outbox").rows]
    if any(effects[m] > 1 for m in messages):
        return "duplicate"
    if any(effects[m] == 0 for m in messages) or not messages and snapshot.table("orders").rows:
        return "lost"
    return "consistent" if messages else "nothing"
