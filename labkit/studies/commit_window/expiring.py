"""The worker of a key that expired (`expired_key`): lesson 2's idempotent step against a
receiver that keeps each key for a TTL, recovering as after a real restart, later.

Started by the launcher (entry `labkit.studies.commit_window.expiring:run_step`) in a fresh
interpreter; like `worker`, it imports only the standard library and labkit's worker-side
modules.
"""

from __future__ import annotations

import time

from labkit.bench.gate import Gate
from labkit.bench.restart import restart_here
from labkit.bench.tickets import PayloadConflict
from labkit.bench.trace import Trace
from labkit.studies.commit_window.stores import Store
from labkit.studies.commit_window.worker import idempotent

__all__ = ["KEYS_SCHEMA", "ExpiringReceiver", "run_step"]

KEYS_SCHEMA = """CREATE TABLE idempotency_keys(
    op_key TEXT PRIMARY KEY, receipt_id INTEGER NOT NULL, payload TEXT NOT NULL,
    stored_at REAL NOT NULL)"""


class ExpiringReceiver(Store):
    """effect.db as a receiver that keeps each key `ttl` seconds: it prunes the expired keys
    at every request, then answers as lesson 2's receiver does (the original receipt for a
    known key, a changed payload refused, a new receipt for a key it does not hold)."""

    def __init__(self, run_dir: str, trace: Trace, ttl: float) -> None:
        super().__init__(run_dir, "effect.db", trace)
        self.ttl = ttl

    def add_receipt_once(self, key: str, payload: str) -> int:
        now = time.time()  # the receiver's clock: a restart later moves it too
        self.db.execute("DELETE FROM idempotency_keys WHERE stored_at < ?", (now - self.ttl,))
        found = self.db.execute(
            "SELECT receipt_id, payload FROM idempotency_keys WHERE op_key=?", (key,)
        ).fetchone()
        if found is not None:
            receipt_id, saved_payload = found
            if saved_payload != payload:
                message = f"key {key!r} holds {saved_payload!r}, not {payload!r}"
                raise PayloadConflict(message, held=saved_payload, sent=payload)
            return receipt_id
        receipt_id = self.add_receipt(key, payload)
        self.db.execute(
            "INSERT INTO idempotency_keys VALUES(?, ?, ?, ?)", (key, receipt_id, payload, now)
        )
        self.wrote("idempotency_keys", "insert", {"op_key": key, "stored_at": now})
        return receipt_id


def run_step(job: dict) -> None:
    """Lesson 2's idempotent step, unless the checkpoint says done; a recovery first goes on
    as after a restart `job["delay"]` seconds after the first attempt."""
    if job["delay"] is not None:
        restart_here(job["delay"])
    trace = Trace(job["run_dir"], job["role"])
    gate = Gate(trace, job)
    control = Store(job["run_dir"], "control.db", trace)
    if not control.is_done():
        idempotent(control, ExpiringReceiver(job["run_dir"], trace, job["ttl"]), gate)
