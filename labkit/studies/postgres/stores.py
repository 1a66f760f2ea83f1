"""Lesson 7's tables in a run's own schema, and a Postgres session that traces its transactions.

`progress` holds the workflow's checkpoint (done), `receipts` the business effect; `orders`
is the crash experiment's table. A `Session` is one connection, named after the worker's role
(Postgres shows it in pg_stat_activity, which is how the parent sees a worker blocked on a
lock or inside its COMMIT); every transaction goes into the trace with the tables it wrote, so
the bench's timeline draws a Postgres run as it draws a SQLite one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from labkit.bench.postgres import connect
from labkit.bench.trace import Trace

__all__ = [
    "CRASH_TABLES",
    "HOLD_LOCK",
    "KEY",
    "LOCAL_COMMIT",
    "PAYLOAD",
    "WINDOW_TABLES",
    "Session",
    "activity_name",
    "counts",
    "other_receipts",
]

KEY = "job-17:save-report:v1"
PAYLOAD = "demo-report-17"

WINDOW_TABLES = """
CREATE TABLE progress(id int PRIMARY KEY, done int NOT NULL);
INSERT INTO progress VALUES (1, 0);
CREATE TABLE receipts(id serial PRIMARY KEY, op_key text NOT NULL, payload text NOT NULL);
"""
# A held order's COMMIT runs this deferred trigger first, which waits for an advisory lock that
# the parent holds: the commit is then really in flight, and pg_stat_activity says so.
CRASH_TABLES = """
CREATE TABLE orders(id serial PRIMARY KEY, label text NOT NULL, held boolean NOT NULL);
CREATE FUNCTION wait_for_parent() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_advisory_xact_lock_shared(7); RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER hold_commit AFTER INSERT ON orders DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW WHEN (NEW.held) EXECUTE FUNCTION wait_for_parent();
"""
# The crash's server waits for a standby that never comes at every commit that asks it to:
# every connection says it will not, but order-3's COMMIT at commit_flushed.
LOCAL_COMMIT = "-c synchronous_commit=local"
HOLD_LOCK = 7  # the advisory lock the parent holds while a commit is to wait in flight
WRITTEN = re.compile(r"^\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)", re.IGNORECASE)


def activity_name(role: str, schema: str) -> str:
    """A worker's name in pg_stat_activity: its role and its run's schema, so that a run
    watching its second worker never takes another run's on the same server for it."""
    return f"labkit-{role} {schema}"


class Session:
    """One Postgres connection of a worker, on the run's schema; `with session.transaction():`
    is one traced transaction. `lane` names it on the timeline (business, checkpoints, ...)."""

    def __init__(
        self, job: dict, lane: str, trace: Trace, isolation: str = "read committed"
    ) -> None:
        self.lane, self.trace, self.isolation = lane, trace, isolation
        self.conn = connect(
            job["postgres_url"],
            job["schema"],
            application_name=activity_name(job["role"], job["schema"]),
        )
        self._writes: list[dict] = []

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """BEGIN ... COMMIT (ROLLBACK if the block raises; the exception goes on)."""
        self.conn.execute(f"BEGIN ISOLATION LEVEL {self.isolation}")
        self.trace.event("begin", file=self.lane)
        self._writes = []
        try:
            yield self
            self.before_commit()
        except BaseException as error:
            self.conn.execute("ROLLBACK")
            self.trace.event("rollback", file=self.lane, error=type(error).__name__)
            raise
        self.conn.execute("COMMIT")
        self.trace.event("commit", file=self.lane, writes=self._writes)
        self.after_commit()

    def before_commit(self) -> None:
        """Called inside every transaction, just before its COMMIT (a reader's kill point)."""

    def after_commit(self) -> None:
        """Called after every COMMIT (a reader's kill point)."""

    def after_read(self) -> None:
        """Called after every statement that returned rows (where a race holds a reader's step:
        what it read, it may act on while the other worker reads the same)."""

    def execute(self, sql: str, params: tuple | list = ()) -> list[tuple]:
        """Run one statement; its rows (none for a write). Writes are noted for the trace."""
        cursor = self.conn.execute(sql, params)
        written = WRITTEN.match(sql)
        if written:
            self._writes.append({"table": written.group(1).lower(), "op": sql.split()[0].lower()})
        if not cursor.description:
            return []
        rows = cursor.fetchall()
        self.after_read()
        return rows

    def is_done(self, lock: str = "") -> bool:
        return self.execute(f"SELECT done FROM progress WHERE id=1 {lock}")[0][0] == 1

    def mark_done(self) -> None:
        self.execute("UPDATE progress SET done=1 WHERE id=1")

    def add_receipt(self) -> None:
        self.execute("INSERT INTO receipts(op_key, payload) VALUES (%s, %s)", (KEY, PAYLOAD))

    def close(self) -> None:
        self.conn.close()


def counts(conn: object) -> dict:
    """{"done", "receipts"} as a new connection sees them (committed rows only)."""
    done, receipts = conn.execute(
        "SELECT (SELECT done FROM progress WHERE id=1), (SELECT count(*) FROM receipts)"
    ).fetchone()
    return {"done": done, "receipts": receipts}


def other_receipts(conn: object) -> list[list]:
    """The receipts that hold other values than KEY and PAYLOAD, as [op_key, payload]: counted
    alone, a receipt of the wrong report looks like the right one."""
    rows = conn.execute(
        "SELECT op_key, payload FROM receipts WHERE NOT (op_key = %s AND payload = %s) ORDER BY id",
        (KEY, PAYLOAD),
    ).fetchall()
    return [list(row) for row in rows]
