"""Writes to a Postgres database, seen by the explorer's workers: noted, never explored.

A graph on PostgresSaver is explored on SQLite (its checkpoints are the run's), but its nodes
may write their own rows to Postgres (psycopg), as such graphs' tools do. Those commits are
not crash points yet: the explorer cannot copy a database per crash state, and every replay
would write there again. So a statement that changed something (its status is INSERT,
UPDATE, DELETE...: not SELECT, SHOW or a transaction's BEGIN / COMMIT) is noted as a write
outside the run folder, and the matrix is never green. Watched from the moment the set-up is
over, through psycopg's cursors (a connection's `execute` uses one); psycopg is watched only
if the reader's code imported it. Worker-side: standard library only.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable

__all__ = ["watch_postgres_writes"]

# A statement's status (psycopg's `statusmessage`) that says it changed nothing durable
READS = ("SELECT", "SHOW", "BEGIN", "START", "COMMIT", "END", "ROLLBACK", "SET", "RESET")
READS += ("SAVEPOINT", "RELEASE", "DECLARE", "FETCH", "CLOSE", "EXPLAIN", "PREPARE", "LISTEN")


def watch_postgres_writes(note: Callable[[str], None]) -> None:
    """Call `note(name)` ("Postgres database shop") after each statement that wrote."""
    psycopg = sys.modules.get("psycopg")
    if psycopg is None:
        return

    def noted(cursor: object) -> None:
        status = cursor.statusmessage or ""
        if status and not status.startswith(READS):
            note(f"Postgres database {cursor.connection.info.dbname}")

    def watched(execute: Callable) -> Callable:
        @functools.wraps(execute)
        def run(cursor: object, *args: object, **kwargs: object) -> object:
            done = execute(cursor, *args, **kwargs)
            noted(cursor)
            return done

        return run

    def watched_async(execute: Callable) -> Callable:
        @functools.wraps(execute)
        async def run(cursor: object, *args: object, **kwargs: object) -> object:
            done = await execute(cursor, *args, **kwargs)
            noted(cursor)
            return done

        return run

    for cursor, wrap in ((psycopg.Cursor, watched), (psycopg.AsyncCursor, watched_async)):
        for name in ("execute", "executemany"):
            setattr(cursor, name, wrap(getattr(cursor, name)))
