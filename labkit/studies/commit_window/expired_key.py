"""A key that expired: lesson 2's idempotent order against a receiver that forgets its keys.

Study 000 puts retention in the receiver's contract, and real receivers prune: Stripe keeps an
idempotency key about 24 hours. Here the receiver keeps each key in `idempotency_keys` for
`ttl` seconds by its own clock, and the receipts themselves forever (a pruned key forgets the
request, not the effect). The step is lesson 2's `idempotent` order, killed at `effect` (the
receipt committed, the checkpoint not); the recovery runs as after a real restart `delay`
seconds later (`restart_here`: its clocks, the receiver's too, run that far ahead). A recovery
inside the TTL finds the key and gets the original receipt; one after it finds no key and
makes a second receipt. The workers and the receiver: `expiring`.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from labkit.bench.errors import check_folder, check_number
from labkit.bench.failures import failing_run, first_failure
from labkit.bench.folders import holds_run_dirs, keep_json, new_run_dir
from labkit.bench.launcher import WorkerProcess
from labkit.bench.snapshot import Snapshot, take_snapshot
from labkit.studies.commit_window.expiring import KEYS_SCHEMA
from labkit.studies.commit_window.outcome import classify
from labkit.studies.commit_window.stores import create_files

__all__ = ["HOUR", "LONGEST_DELAY", "STRIPE_TTL", "ExpiredKeyRun", "run_expired_key"]

HOUR = 3_600
STRIPE_TTL = 24 * HOUR  # how long Stripe keeps an idempotency key
FILES = ("control.db", "effect.db")
KILL_AT = "effect"  # the receipt committed, the checkpoint not
LONGEST_DELAY = 10 * 366 * 24 * HOUR  # ten years: a recovery later than that is a typo


@dataclass
class ExpiredKeyRun:
    """One crash at `effect` and its recovery `delay` seconds later, against a TTL of `ttl`."""

    delay: float
    ttl: float
    run_dir: Path
    before: Snapshot
    after: Snapshot
    outcome: str  # consistent, duplicate, ... (study 000's words) or failed
    failure: dict | None

    @property
    def receipts(self) -> int:
        return self.after.receipts

    def summary(self) -> dict:
        hours = {"delay_h": self.delay / HOUR, "ttl_h": self.ttl / HOUR}
        return {
            **hours,
            "receipts": self.receipts,
            "outcome": self.outcome,
            "run_dir": str(self.run_dir),
        }


def worker(run_dir: Path, role: str, job: dict, **plan: object) -> WorkerProcess:
    entry = "labkit.studies.commit_window.expiring:run_step"
    return WorkerProcess(run_dir, role, entry, job, start_mode="served", **plan)


@holds_run_dirs
def run_expired_key(
    delay: float, ttl: float = STRIPE_TTL, out: Path | str | None = None
) -> ExpiredKeyRun:
    """Kill the idempotent step at `effect` (SIGKILL), recover `delay` seconds later against a
    receiver that keeps keys `ttl` seconds; what the files hold before and after recovery."""
    check_number("delay", delay, 0, LONGEST_DELAY)
    check_number("ttl", ttl, 0, LONGEST_DELAY)
    run_dir = new_run_dir(check_folder("out", out), prefix="expired-key-")
    with failing_run(run_dir):
        create_files(run_dir, FILES, unique_key=False)  # the keys table does the deduplicating
        db = sqlite3.connect(run_dir / "effect.db", isolation_level=None)
        db.execute(KEYS_SCHEMA)
        db.close()
        with worker(run_dir, "first", {"ttl": ttl, "delay": None}, pause_at=(KILL_AT,)) as first:
            first.finish(kill_at=KILL_AT)
        before = take_snapshot(run_dir, FILES)
        with worker(run_dir, "recovery", {"ttl": ttl, "delay": delay}) as recovery:
            recovery.wait()
        after = take_snapshot(run_dir, FILES)
        failure = first_failure([(first.report(), KILL_AT), (recovery.report(), None)])
        run = ExpiredKeyRun(delay, ttl, run_dir, before, after, classify(after, failure), failure)
        keep_json(run_dir, results=run.summary())
    return run
