"""A receiver that recognises an operation by its key: study 001's ticket service, and the
ticket service of lesson 5 (which serves it over HTTP).

`UNIQUE(tenant, op_key)`; the canonical payload (sorted JSON) is stored with the ticket. The
same tenant, key and payload return the original ticket id; the same key with another
payload is refused and changes nothing; another tenant with the same key gets its own ticket.
Look-up and insert run in one `BEGIN IMMEDIATE` transaction, so two processes racing with the
same key leave one ticket. Its own SQLite file, apart from any checkpointer. Standard library.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Mapping

__all__ = ["TICKETS_FILE", "PayloadConflict", "Tickets"]

TICKETS_FILE = "tickets.db"


class PayloadConflict(Exception):
    """The receiver already holds this operation key with a different payload: it holds
    `held`, it was sent `sent` (what a view says, in the reader's language; the message is
    the traceback's)."""

    def __init__(self, message: str, held: str | None = None, sent: str | None = None) -> None:
        super().__init__(message)
        self.held, self.sent = held, sent


SCHEMA = """CREATE TABLE IF NOT EXISTS ticket (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant TEXT NOT NULL, op_key TEXT NOT NULL, payload TEXT NOT NULL,
    UNIQUE(tenant, op_key))"""


class Tickets:
    """One process's connection to the ticket service."""

    def __init__(self, run_dir: str | os.PathLike, timeout: float = 10.0) -> None:
        self.conn = sqlite3.connect(
            os.path.join(run_dir, TICKETS_FILE), timeout=timeout, isolation_level=None
        )
        self.conn.execute(SCHEMA)

    def create(
        self,
        tenant: str,
        op_key: str,
        title: str,
        details: Mapping[str, object] | None = None,
        gate: Callable[[str], None] | None = None,
    ) -> int:
        """The ticket for this operation: a new one, or the original on a retry. `details`:
        the request's other fields that affect the result; all are compared, normalised.
        `gate`: called with "read" between the look-up and the insert (the race test)."""
        fields = {"title": title, **(details or {})}
        payload = json.dumps(fields, sort_keys=True, ensure_ascii=False)
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            row = self.conn.execute(
                "SELECT id, payload FROM ticket WHERE tenant=? AND op_key=?", (tenant, op_key)
            ).fetchone()
            if gate is not None:  # the race test stops a racer here, between its read and its
                gate("read")  # write, to force the interleaving a plain BEGIN would let through
            if row and row[1] != payload:
                message = f"{tenant}/{op_key} already holds {row[1]}, not {payload}"
                raise PayloadConflict(message, held=row[1], sent=payload)
            ticket_id = (
                row[0]
                if row
                else self.conn.execute(
                    "INSERT INTO ticket(tenant, op_key, payload) VALUES(?, ?, ?)",
                    (tenant, op_key, payload),
                ).lastrowid
            )
            self.conn.execute("COMMIT")
            return ticket_id
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def find(self, tenant: str, op_key: str) -> int | None:
        """The ticket id this operation got, or None if the service never created it."""
        row = self.conn.execute(
            "SELECT id FROM ticket WHERE tenant=? AND op_key=?", (tenant, op_key)
        ).fetchone()
        return row[0] if row else None

    def rows(self) -> list[tuple]:
        return self.conn.execute(
            "SELECT id, tenant, op_key, payload FROM ticket ORDER BY id"
        ).fetchall()

    def close(self) -> None:
        self.conn.close()


def create_when_told(job: dict) -> None:
    """A worker entry for the race test: wait at the gate, then create with the job's key,
    passing the gate again between the look-up and the insert ("read")."""
    from labkit.bench.gate import Gate
    from labkit.bench.trace import Trace

    tickets = Tickets(job["run_dir"])
    gate = Gate(Trace(job["run_dir"], job["role"]), job)
    gate("ready")
    ticket_id = tickets.create(job["tenant"], job["op_key"], job["title"], gate=gate)
    print(ticket_id)
