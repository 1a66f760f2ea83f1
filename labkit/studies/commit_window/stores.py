"""The two SQLite stores of study 000, as the worker writes them.

`control.db` holds the workflow checkpoint (`progress.done`); `effect.db` holds the business
effect (`receipts`). The `atomic` order keeps both tables in `control.db`. Every write runs in
a traced transaction (`bench.store`), so a timeline can show what each file held at any moment.
Worker-side: standard library only.
"""

from __future__ import annotations

import os
import sqlite3

from labkit.bench.store import TracedStore
from labkit.bench.tickets import PayloadConflict

__all__ = [
    "KEY",
    "PAYLOAD",
    "Store",
    "create_files",
]

KEY = "job-17:save-report:v1"  # the operation's identity, fixed before the first attempt
PAYLOAD = "demo-report-17"

PROGRESS_SCHEMA = """
CREATE TABLE progress(id INTEGER PRIMARY KEY, done INTEGER NOT NULL);
INSERT INTO progress VALUES(1, 0);
"""
RECEIPTS_SCHEMA = """
CREATE TABLE receipts(id INTEGER PRIMARY KEY, op_key TEXT NOT NULL, payload TEXT NOT NULL);
"""
UNIQUE_KEY = "CREATE UNIQUE INDEX receipt_key ON receipts(op_key);"


def create_files(run_dir: str | os.PathLike, files: tuple[str, ...], unique_key: bool) -> None:
    """Fresh files for a run: `progress` in control.db, `receipts` in the last file."""
    for name in files:
        db = sqlite3.connect(os.path.join(run_dir, name), isolation_level=None)
        db.execute("PRAGMA synchronous=OFF")  # set-up before any worker: no crash to survive yet
        if name == "control.db":
            db.executescript(PROGRESS_SCHEMA)
        if name == files[-1]:
            db.executescript(RECEIPTS_SCHEMA + (UNIQUE_KEY if unique_key else ""))
        db.close()


class Store(TracedStore):
    """control.db or effect.db as study 000's worker sees it; `with store:` is one traced
    transaction (`bench.store`)."""

    def is_done(self) -> bool:
        return self.db.execute("SELECT done FROM progress WHERE id=1").fetchone()[0] == 1

    def mark_done(self) -> None:
        """The workflow checkpoint: this step is finished."""
        self.db.execute("UPDATE progress SET done=1 WHERE id=1")
        self.wrote("progress", "update", {"id": 1, "done": 1})

    def add_receipt(self, key: str, payload: str) -> int:
        """The business effect, as a receiver without deduplication takes it: always a new row."""
        cursor = self.db.execute(
            "INSERT INTO receipts(op_key, payload) VALUES(?, ?)", (key, payload)
        )
        row = {"id": cursor.lastrowid, "op_key": key, "payload": payload}
        self.wrote("receipts", "insert", row)
        return cursor.lastrowid

    def add_receipt_once(self, key: str, payload: str) -> int:
        """The receiver's idempotency contract: one receipt per key, the original id on a retry,
        and a different payload under a known key refused (nothing changes)."""
        found = self.db.execute(
            "SELECT id, payload FROM receipts WHERE op_key=?", (key,)
        ).fetchone()
        if found is None:
            return self.add_receipt(key, payload)
        receipt_id, saved_payload = found
        if saved_payload != payload:
            message = f"key {key!r} already holds {saved_payload!r}, not {payload!r}"
            raise PayloadConflict(message, held=saved_payload, sent=payload)
        return receipt_id
