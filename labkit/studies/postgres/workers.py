"""Lesson 7's workers, forked from the trial server (psycopg is loaded there already).

`run_step`: one workflow step that writes a receipt (the business effect) and done=1 (the
checkpoint) in one of three orders, or a reader's own step; every kill point goes through the
gate. `crash_client`: a client that commits two orders and then a third, whose COMMIT the
parent catches at a chosen point to SIGKILL the server under it.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg

from labkit.bench.gate import Gate, report
from labkit.bench.postgres import connect
from labkit.bench.trace import Trace
from labkit.studies.postgres.spec import LEARNER_FILE, READ_POINT
from labkit.studies.postgres.stores import HOLD_LOCK, KEY, LOCAL_COMMIT, PAYLOAD, Session

__all__ = ["crash_client", "run_step"]

FORBIDDEN = ("BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT", "SAVEPOINT", "RELEASE")


def effect_first(job: dict, trace: Trace, gate: Gate) -> None:
    business, checkpoints = Session(job, "business", trace), Session(job, "checkpoints", trace)
    if checkpoints.is_done():
        return skip(trace)
    with business.transaction():
        business.add_receipt()
    gate("effect")
    with checkpoints.transaction():
        checkpoints.mark_done()
    gate("checkpoint")


def checkpoint_first(job: dict, trace: Trace, gate: Gate) -> None:
    business, checkpoints = Session(job, "business", trace), Session(job, "checkpoints", trace)
    if checkpoints.is_done():
        return skip(trace)
    with checkpoints.transaction():
        checkpoints.mark_done()
    gate("checkpoint")
    with business.transaction():
        business.add_receipt()
    gate("effect")


# What the one-transaction step reads done with, per lock (RaceSpec.lock).
READ_DONE = {"none": "", "for_update": "FOR UPDATE", "serializable": ""}


def one_transaction(job: dict, trace: Trace, gate: Gate) -> None:
    """Both writes in one transaction, after a read of done that (with FOR UPDATE) locks the
    row: a second worker waits at that read until this one commits. SERIALIZABLE instead lets
    the second go on and fails its write (40001); it then runs again and finds done=1."""
    lock = job.get("lock", "for_update")
    isolation = "serializable" if lock == "serializable" else "read committed"
    db = Session(job, "postgres", trace, isolation)
    for attempt in (1, 2):
        try:
            with db.transaction():
                done = db.is_done(READ_DONE[lock])
                gate("locked")
                if done:
                    return skip(trace)
                db.add_receipt()
                db.mark_done()
                gate("in_transaction")
            gate("committed")
            return report(job, did="wrote", attempts=attempt)
        except psycopg.errors.SerializationFailure as error:
            trace.event("retry", error=str(error).splitlines()[0])
    raise RuntimeError("a second serialization failure: the step gives up")


STEPS = {
    "effect_first": effect_first,
    "checkpoint_first": checkpoint_first,
    "one_transaction": one_transaction,
}


def skip(trace: Trace) -> None:
    trace.event("skip", reason="done=1: the checkpoint says the step already ran")


class ReaderSession(Session):
    """A reader's step gets one session; the lab kills it before and after every COMMIT, so
    it refuses transaction control written as SQL (`with db.transaction():` does that). A race
    also holds it after a statement that read rows."""

    def __init__(self, job: dict, trace: Trace, gate: Gate) -> None:
        super().__init__(job, "postgres", trace)
        self.gate, self.commits, self.reads = gate, 0, 0

    def execute(self, sql: str, params: tuple | list = ()) -> list[tuple]:
        first = sql.split(None, 1)[:1]
        if first and first[0].upper().rstrip(";") in FORBIDDEN:
            raise ValueError("write transactions as `with db.transaction():`, not as SQL")
        if not self.conn.info.transaction_status:  # outside a transaction: its own commit
            with self.transaction():
                return self.execute(sql, params)
        try:
            return super().execute(sql, params)
        except psycopg.Error as error:  # its first line: the rest points at the SQL with a caret
            raise type(error)(str(error).splitlines()[0]) from None

    def before_commit(self) -> None:
        self.commits += 1
        self.gate(f"before commit {self.commits}")

    def after_commit(self) -> None:
        self.gate.after_commit(self.lane)

    def after_read(self) -> None:
        self.reads += 1
        self.gate(f"{READ_POINT} {self.reads}")


def reader_step(job: dict) -> Callable[[ReaderSession], None]:
    """The reader's `step(db)`, compiled under a file name the judge can find in a traceback."""
    namespace = {"KEY": KEY, "PAYLOAD": PAYLOAD}
    exec(compile(job["step_source"], LEARNER_FILE, "exec"), namespace)
    if not callable(namespace.get("step")):
        raise NameError("define a function step(db)")
    return namespace["step"]


def run_step(job: dict) -> None:
    """The step once: a built-in order (it checks done itself) or the reader's `step(db)`."""
    trace = Trace(job["run_dir"], job["role"])
    trace.event("start", order=job["order"])
    gate = Gate(trace, job)
    if job.get("step_source"):
        reader_step(job)(ReaderSession(job, trace, gate))
    else:
        STEPS[job["order"]](job, trace, gate)
    trace.event("exit", code=0)


def crash_client(job: dict) -> None:
    """Commit order-1 and order-2, then order-3 with its COMMIT at the job's crash point:
    held by the trigger (commit_in_flight), or waiting for a standby after its WAL flush
    (commit_flushed). Reports what each COMMIT returned, as the client saw it."""
    trace = Trace(job["run_dir"], job["role"])
    gate = Gate(trace, job)
    conn = connect(
        job["postgres_url"],
        application_name=f"labkit-{job['role']}",
        options=LOCAL_COMMIT,  # only order-3's commit_flushed waits for the standby
    )
    saw = {}
    for n, held in ((1, False), (2, False), (3, job["point"] == "commit_in_flight")):
        label = f"order-{n}"
        conn.execute("BEGIN")
        if n == 3 and job["point"] == "commit_flushed":  # wait for a standby after the flush
            conn.execute("SET LOCAL synchronous_commit = on")
        conn.execute("INSERT INTO orders(label, held) VALUES (%s, %s)", (label, held))
        trace.event("begin", file="postgres", order=label)
        if n == 3:
            gate("before_commit")
        try:
            conn.execute("COMMIT")
        except psycopg.OperationalError as error:
            saw[label] = f"error: {str(error).strip().splitlines()[0]}"
            trace.event("commit_failed", file="postgres", order=label, error=saw[label])
            break
        saw[label] = "committed"
        trace.event("commit", file="postgres", writes=[{"table": "orders", "op": "insert"}])
    report(job, saw=saw, hold_lock=HOLD_LOCK)
    gate("after_commit")
