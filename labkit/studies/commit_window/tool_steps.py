"""Three tool steps from study 000's closing section, run in a worker like the write orders.

- `queue_pop`: a read that consumes (a queue pop) is a side effect too: the pop commits in
  `queue.db`, the job's receipt and done=1 commit together in `control.db` afterwards.
- `queue_claim`: the same pop made safe to repeat: the claim carries the step's operation key,
  and a retry first looks for the job its key already claimed.
- `pending_first`: a pending "outcome unknown" state in the checkpoint before the call; a
  recovery that finds it does not guess, it keeps the state for reconciliation.

Worker-side: standard library and the bench's worker-side modules only.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from labkit.bench.gate import Gate
from labkit.bench.store import connect
from labkit.bench.trace import Trace
from labkit.studies.commit_window.stores import KEY, PAYLOAD, Store

__all__ = ["JOBS", "QUEUE_FILE", "TOOL_STEPS", "ToolStep", "create_queue", "reconcile", "run"]

QUEUE_FILE = "queue.db"
JOBS = ("job-1", "job-2", "job-3")
QUEUE_SCHEMA = "CREATE TABLE jobs(id INTEGER PRIMARY KEY, job TEXT NOT NULL, taken_by TEXT);"
PENDING_SCHEMA = "CREATE TABLE pending(op_key TEXT PRIMARY KEY, state TEXT NOT NULL);"


@dataclass(frozen=True)
class ToolStep:
    """One tool step: its files and the kill points it passes in order. What it does is said
    by its view (`labkit.views.tables`): a worker imports this module, so it has no words."""

    name: str
    files: tuple[str, ...]
    kill_points: tuple[str, ...]


TOOL_STEPS = {
    step.name: step
    for step in (
        ToolStep(
            "queue_pop",
            ("control.db", QUEUE_FILE),
            ("start", "popped", "done"),
        ),
        ToolStep(
            "queue_claim",
            ("control.db", QUEUE_FILE),
            ("start", "popped", "done"),
        ),
        ToolStep(
            "pending_first",
            ("control.db", "effect.db"),
            ("start", "pending", "effect", "checkpoint"),
        ),
    )
}


def create_queue(run_dir: str) -> None:
    """`queue.db` with three jobs waiting, none taken."""
    db = sqlite3.connect(os.path.join(run_dir, QUEUE_FILE), isolation_level=None)
    db.executescript(QUEUE_SCHEMA)
    db.executemany("INSERT INTO jobs(job) VALUES(?)", [(job,) for job in JOBS])
    db.close()


def create_pending_table(run_dir: str) -> None:
    """`pending` beside `progress` in control.db: the operation's state before and after a call."""
    db = sqlite3.connect(os.path.join(run_dir, "control.db"), isolation_level=None)
    db.executescript(PENDING_SCHEMA)
    db.close()


def pop(queue: sqlite3.Connection) -> str:
    """Take the next job for good: once this commits, no one else will ever see it."""
    row = queue.execute(
        "DELETE FROM jobs WHERE id=(SELECT min(id) FROM jobs WHERE taken_by IS NULL) RETURNING job"
    ).fetchone()
    return row[0]


def claim(queue: sqlite3.Connection) -> str:
    """The job this operation already claimed, or claim the next one under its key."""
    mine = queue.execute("SELECT job FROM jobs WHERE taken_by=?", (KEY,)).fetchone()
    if mine:
        return mine[0]
    return queue.execute(
        "UPDATE jobs SET taken_by=? WHERE id=(SELECT min(id) FROM jobs WHERE taken_by IS NULL)"
        " RETURNING job",
        (KEY,),
    ).fetchone()[0]


def take_then_process(take: Callable[[sqlite3.Connection], str]) -> Callable:
    """A step that takes a job from the queue (its own commit), then commits the job's receipt
    and done=1 together: the commit window lies between the two."""

    def step(control: Store, run_dir: str, gate: Gate) -> None:
        queue = connect(os.path.join(run_dir, QUEUE_FILE))
        queue.execute("BEGIN IMMEDIATE")
        job = take(queue)
        queue.execute("COMMIT")
        gate("popped")
        with control:  # the job's receipt and done=1 in one transaction, one file
            control.add_receipt(KEY, job)
            control.mark_done()
        gate("done")

    return step


def pending_state(control: Store) -> str | None:
    """What the checkpoint says of the call: pending, unknown, done, ...; None before any."""
    row = control.db.execute("SELECT state FROM pending WHERE op_key=?", (KEY,)).fetchone()
    return row[0] if row else None


def set_pending(control: Store, state: str) -> None:
    """Inside an open transaction of `control`: the call's state, as the checkpoint keeps it."""
    control.db.execute("INSERT OR REPLACE INTO pending VALUES(?, ?)", (KEY, state))


def pending_first(control: Store, run_dir: str, gate: Gate) -> None:
    """Save the intent before the call; after the call, done=1 and the intent closed."""
    with control:
        set_pending(control, "pending")
    gate("pending")
    effect = Store(run_dir, "effect.db", gate.trace)
    with effect:
        effect.add_receipt(KEY, PAYLOAD)  # a receiver that can neither dedupe nor be asked
    gate("effect")
    with control:
        control.mark_done()
        set_pending(control, "done")
    gate("checkpoint")


STEPS = {
    "queue_pop": take_then_process(pop),
    "queue_claim": take_then_process(claim),
    "pending_first": pending_first,
}


def run(job: dict) -> None:
    """Do the step once, unless the checkpoint says it is done, or that its outcome is unknown."""
    run_dir = job["run_dir"]
    trace = Trace(run_dir, job["role"])
    trace.event("start", order=job["step"])
    gate = Gate(trace, job)
    control = Store(run_dir, "control.db", trace)
    if control.is_done():
        print("checkpoint says done=1: skipping the step")
    elif job["step"] == "pending_first" and pending_state(control) is not None:
        with control:  # the call may or may not have happened: say so, do not guess
            set_pending(control, "unknown")
        print("checkpoint says pending: the outcome is unknown, kept for reconciliation")
    else:
        gate("start")
        STEPS[job["step"]](control, run_dir, gate)
    trace.event("exit", code=0)


def reconcile(job: dict) -> None:
    """The reconciliation path for an unknown outcome: someone who can read the receiver's
    records (here: effect.db) looks the operation up. Found: done. Not found: no call can still
    land (its caller is dead), so make it now, once."""
    run_dir = job["run_dir"]
    trace = Trace(run_dir, job["role"])
    control, effect = Store(run_dir, "control.db", trace), Store(run_dir, "effect.db", trace)
    if pending_state(control) != "unknown":
        print("nothing to reconcile")
        return
    found = effect.db.execute("SELECT id FROM receipts WHERE op_key=?", (KEY,)).fetchone()
    if found is None:
        with effect:
            effect.add_receipt(KEY, PAYLOAD)
    with control:
        control.mark_done()
        set_pending(control, "confirmed" if found else "sent by reconciliation")
    print("found receipt", found[0] if found else "none: sent it once")
