"""One worker: claim the task, write the document through the receiver, mark the task done.

It reads the time from the lab's clock, stops at its points when its parent asks (`Gate`), and
dies with its parent: a worker frozen by SIGSTOP cannot notice that its parent has gone, so
Linux kills it then (`portable.die_with`). A reader's claim or receiver runs here in place of the
built-in one, with a point before each of its statements that opens a transaction: the
moments where another worker can come between two of its transactions. Worker-side: standard
library only.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable

from labkit.bench.gate import Gate, report
from labkit.bench.portable import die_with
from labkit.bench.trace import Trace
from labkit.studies.leases.stores import (
    CLAIMS,
    RECEIVER_FILE,
    TASKS_FILE,
    connect,
    finish,
    lab_now,
    landed,
    receive_fenced,
    receive_unfenced,
    refuse,
    renew_by_name,
)

__all__ = ["CLAIM_FILE", "RECEIVE_FILE", "run_worker", "statement_point", "write_point"]

CLAIM_FILE = "<your claim>"  # a reader's code's file name in a traceback (the judge finds it)
RECEIVE_FILE = "<your receiver>"


def statement_point(part: str, number: int) -> str:
    """The point before a reader's `number`th statement run outside a transaction."""
    return f"{part} statement {number}"


def write_point(number: int) -> str:
    """The point before a worker's `number`th write of its report (from the second: between
    its report and a correction, where the lab may freeze it)."""
    return f"before write {number}"


def readers(
    source: str,
    file: str,
    part: str,
    db: sqlite3.Connection,
    gate: Gate,
    look: Callable[[], object] | None = None,
) -> Callable:
    """The reader's function from `source`, called with a point before each of its statements
    that runs outside a transaction (the lab may freeze the worker there); `look` runs at each
    point first, before any freeze: what the statements before it left, no other worker's yet."""
    namespace: dict = {}
    exec(compile(source, file, "exec"), namespace)  # the reader's own lab
    function = next(  # the first function the source defines, as the check reads it
        v
        for v in namespace.values()
        if getattr(v, "__code__", None) and v.__code__.co_filename == file
    )
    seen = 0

    def before(sql: str) -> None:
        nonlocal seen
        if not db.in_transaction:
            seen += 1
            if look:
                look()
            gate(statement_point(part, seen))

    def call(*args: object) -> object:
        db.set_trace_callback(before)
        try:
            return function(db, *args)
        finally:
            db.set_trace_callback(None)

    return call


def run_worker(job: dict) -> None:
    """Claim, (renew), write, finish; each step in the trace with the lab's time."""
    die_with(job["parent"])
    run_dir, method, me, lease_ms = job["run_dir"], job["method"], job["name"], job["lease_ms"]
    trace = Trace(run_dir, job["role"])
    trace.event("start", worker=me, method=method, lab_ms=lab_now(run_dir))
    gate = Gate(trace, job)
    tasks, receiver = connect(run_dir, TASKS_FILE), connect(run_dir, RECEIVER_FILE)
    if job.get("claim_source"):
        claim = readers(job["claim_source"], CLAIM_FILE, "claim", tasks, gate)
        fence = claim(me, lab_now(run_dir), lease_ms)
    else:
        fence = CLAIMS[method](tasks, me, lab_now(run_dir), lease_ms, gate)
    now = lab_now(run_dir)
    trace.event("claim", won=fence is not None, fence=fence, lab_ms=now, lease_ms=lease_ms)
    if fence is None:
        report(job, claimed=False)
        return
    gate("claimed")
    if method == "renew_by_name":
        renewed = renew_by_name(tasks, me, lab_now(run_dir), lease_ms)
        trace.event("renew", held=renewed, lab_ms=lab_now(run_dir), lease_ms=lease_ms)
        if not renewed:
            report(job, claimed=True, fence=fence, renewed=False)
            return
    writes = []
    for n in range(1, job["writes"] + 1):
        if n > 1:
            gate(write_point(n))
        # the document's text as data, in no language: writer/token/nth write ("w1/33/1"; the
        # second is the first's correction)
        text = f"{job['role']}/{fence}/{n}"
        writes.append(write_report(job, receiver, gate, me, fence, text))
        trace.event("write", applied=writes[-1]["applied"], fence=fence, lab_ms=lab_now(run_dir))
    gate("written")
    done = finish(tasks, fence)
    trace.event("done", marked=done, fence=fence, lab_ms=lab_now(run_dir))
    answers = {"writes": writes} if job.get("receive_source") else {}  # the judge reads theirs
    report(job, claimed=True, fence=fence, applied=writes[-1]["applied"], done=done, **answers)


def write_report(
    job: dict, db: sqlite3.Connection, gate: Gate, me: str, fence: int, body: str
) -> dict:
    """One write of the report through the receiver: the lab's own, or the reader's, judged by
    the file whatever their function returned (noted beside it: the judge compares the two).
    The reader's write is looked for between their statements too, through a connection of the
    lab's: another worker may write over it before their function returns (a receiver that
    writes, then asks SQLite's changes(), wrote all the same)."""
    if not job.get("receive_source"):
        receive = receive_fenced if job["fenced"] else receive_unfenced
        return {"applied": receive(db, me, fence, body)}
    seen: list[bool] = []  # whether the document held it, at each point of the call
    with contextlib.closing(connect(job["run_dir"], RECEIVER_FILE)) as watch:

        def look() -> None:
            seen.append(landed(watch, me, fence, body))

        receive = readers(job["receive_source"], RECEIVE_FILE, "receive", db, gate, look)
        returned = receive(me, fence, body)
    applied = landed(db, me, fence, body) or any(seen)
    if not applied:
        refuse(db, me, fence)
    return {"applied": applied, "returned": repr(returned), "said_written": bool(returned)}
