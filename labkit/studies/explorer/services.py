"""The lab's services as crash points: lesson 6's claims.

A step that claims a task through lesson 6's claim functions (`leases.stores`: select then
update, the conditional update, the lease) gets its crash point after the claim's commit named
as what it is, "claim claim_lease (tasks.db)", at the reader's line that called it; the commit
watch finds the commit itself, whether the claim commits on its own (autocommit) or in the
reader's transaction. Worker-side: standard library only.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from labkit.studies.leases import stores as leases

if TYPE_CHECKING:
    from labkit.studies.explorer.record import CrashPoints

__all__ = ["CLAIM_FUNCTIONS", "watch_claims"]

CLAIM_FUNCTIONS = ("claim_select_then_update", "claim_conditional", "claim_lease")


def watch_claims(points: CrashPoints) -> None:
    """In this process, every claim function of lesson 6 (by name, and in its CLAIMS table)
    names the commit it makes. Done before the reader's module is loaded, so that a name it
    imports is the named one."""
    named = {name: naming(getattr(leases, name), points) for name in CLAIM_FUNCTIONS}
    for name, claim in named.items():
        setattr(leases, name, claim)
    for method, claim in leases.CLAIMS.items():
        leases.CLAIMS[method] = named.get(claim.__name__, claim)


def naming(claim: Callable, points: CrashPoints) -> Callable:
    """`claim`, with the next commit to its connection's file named after it."""

    @functools.wraps(claim)
    def claimed(db: sqlite3.Connection, *args: object, **kwargs: object) -> int | None:
        file = os.path.basename(db.execute("PRAGMA database_list").fetchone()[2])
        points.next_commit = ("claim", claim.__name__, file)
        try:
            return claim(db, *args, **kwargs)
        finally:
            if not db.in_transaction:  # its own commit (a RETURNING row read ends it) is seen
                points.watch.observe()  # now, its crash point at the reader's call
                points.next_commit = None  # (or it changed nothing)

    return claimed
