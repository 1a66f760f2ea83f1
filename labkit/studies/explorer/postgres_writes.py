"""Writes to a Postgres database, seen by the explorer's workers through psycopg.

A graph's nodes may keep their own rows in Postgres, as the tools of graphs on PostgresSaver
do. Given a server (`explore(..., postgres=...)`), every run of the exploration has a schema
of its own there (`postgres_runs`), which its connections reach by their search path: a
commit that wrote to it is a crash point, as a SQLite file's commit is. A commit is seen where
the connection goes back to idle with writes in it: after a statement in autocommit mode,
after `commit()`, a COMMIT statement or a `transaction()` block's end (a rollback clears it).
The explorer's own PostgresSaver (`postgres_saver`) is not watched: its `put` is the point.

Any other write (another database, or no server given) cannot be explored: the explorer
cannot copy that database per crash state, and every replay would write there again. It is
noted as a write outside the run folder, and the matrix is never green; so is a statement of
the run's own role that the server refused (it reached outside the run's schema, where the
role may do nothing: `postgres_roles`). A statement wrote if
its status (psycopg's `statusmessage`) says INSERT, UPDATE, DELETE...: not SELECT, SHOW or a
transaction's BEGIN / COMMIT. psycopg is watched only if the reader's code imported it (or
the server preloaded it for them). Worker-side: standard library only.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable

__all__ = ["SAVER_MARK", "watch_postgres_writes"]

SAVER_MARK = "application_name=labkit_checkpoints"  # the explorer's PostgresSaver's connection

# A statement's status (psycopg's `statusmessage`) that says it changed nothing durable
READS = ("SELECT", "SHOW", "BEGIN", "START", "COMMIT", "END", "ROLLBACK", "SET", "RESET")
READS += ("SAVEPOINT", "RELEASE", "DECLARE", "FETCH", "CLOSE", "EXPLAIN", "PREPARE", "LISTEN")
ROLLED_BACK = ("ROLLBACK", "ABORT")
IDLE = 0  # libpq's PQTRANS_IDLE: no transaction open, all it did is committed
NO_PRIVILEGE = "42501"  # SQLSTATE insufficient_privilege: the run's role may not do that


def watch_postgres_writes(
    note: Callable[[str], None],
    run: tuple[str, str] | None = None,
    committed: Callable[[str], None] | None = None,
) -> None:
    """Call `committed(name)` ("Postgres database shop") after each commit that wrote to the
    run's own schema (`run`: its database and schema), and `note(name)` after any other
    statement that wrote."""
    psycopg = sys.modules.get("psycopg")
    if psycopg is None:
        return
    import weakref  # only where psycopg is: a step's worker starts without it

    dirty: weakref.WeakSet = weakref.WeakSet()  # connections with writes not committed yet

    def the_runs(conn: object) -> bool:
        """A connection to the run's own schema: its database, logged in as the run's own role
        (named as its schema), which no SET or RESET ROLE can leave."""
        return run is not None and conn.info.dbname == run[0] and conn.info.user == run[1]

    def refused(cursor: object, error: BaseException) -> None:
        """A statement of the run's role the server refused (it reached outside the run's
        schema: `INSERT INTO public.orders`): noted as a write outside, with the server's
        reason, before the reader's code sees the error."""
        conn = cursor.connection
        if getattr(error, "sqlstate", None) == NO_PRIVILEGE and the_runs(conn):
            reason = str(error).strip().splitlines()[0] if str(error).strip() else NO_PRIVILEGE
            note(f"Postgres database {conn.info.dbname} ({reason})")

    def settled(conn: object, *_: object) -> None:
        if conn in dirty and conn.info.transaction_status == IDLE:
            dirty.discard(conn)
            if committed is not None:
                committed(f"Postgres database {conn.info.dbname}")

    def after_statement(cursor: object, *_: object) -> None:
        conn, status = cursor.connection, cursor.statusmessage or ""
        if SAVER_MARK in conn.info.options:  # the lab's saver: its put is the crash point
            return
        if status.startswith(ROLLED_BACK):
            dirty.discard(conn)
        elif status and not status.startswith(READS):
            if not the_runs(conn):
                note(f"Postgres database {conn.info.dbname}")
                return
            dirty.add(conn)
        settled(conn)

    def after_block(transaction: object, failure: object = None, *_: object) -> None:
        if failure is not None:
            dirty.discard(transaction.connection)  # the block rolled back
        settled(transaction.connection)

    def watched(method: Callable, after: Callable) -> Callable:
        @functools.wraps(method)
        def run_it(self: object, *args: object, **kwargs: object) -> object:
            try:
                done = method(self, *args, **kwargs)
            except Exception as error:
                if after is after_statement:
                    refused(self, error)
                raise
            after(self, *args)
            return done

        return run_it

    def watched_async(method: Callable, after: Callable) -> Callable:
        @functools.wraps(method)
        async def run_it(self: object, *args: object, **kwargs: object) -> object:
            try:
                done = await method(self, *args, **kwargs)
            except Exception as error:
                if after is after_statement:
                    refused(self, error)
                raise
            after(self, *args)
            return done

        return run_it

    classes = (
        (watched, psycopg.Cursor, psycopg.Connection, psycopg.Transaction, "__exit__"),
        (
            watched_async,
            psycopg.AsyncCursor,
            psycopg.AsyncConnection,
            psycopg.AsyncTransaction,
            "__aexit__",
        ),
    )
    for wrap, cursor, connection, transaction, exit_name in classes:
        for name in ("execute", "executemany"):
            setattr(cursor, name, wrap(getattr(cursor, name), after_statement))
        connection.commit = wrap(connection.commit, settled)
        connection.rollback = wrap(connection.rollback, dirty.discard)
        setattr(transaction, exit_name, wrap(getattr(transaction, exit_name), after_block))
