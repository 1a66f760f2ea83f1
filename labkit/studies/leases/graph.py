"""Lesson 6 in LangGraph: two processes resume the same thread from one SqliteSaver file.

The graph: `review` asks for approval with `interrupt()`, then `publish` writes the report to
the receiver (the effect) and a ledger line. A first process runs it to the interrupt and
exits; then two processes resume the thread with `Command(resume=...)`, as a double-clicked
"approve" or two API workers would. LangGraph 1.2 has no owner for a thread: both load the
same checkpoint, both run, and the chain forks (langgraph#8796). A process frozen while it holds
the file's write lock makes the other fail with `database is locked` (study 004's pitfall).
The fix: each process claims the thread (a lease and a fencing token, `stores.claim_lease`)
before it resumes, and the publish node writes through the fenced receiver.

Runs in the trial server's forked workers (this module imports LangGraph; the graph is
compiled once, there).
"""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from labkit.bench.checkpoints import checkpoint_report, open_saver, with_saver
from labkit.bench.gate import Gate, report
from labkit.bench.ledger import Ledger
from labkit.bench.trace import Trace
from labkit.studies.leases.stores import (
    LOCK_POINT,
    RECEIVER_FILE,
    TASKS_FILE,
    claim_lease,
    connect,
    lab_now,
    receive_fenced,
    receive_unfenced,
)

__all__ = ["CONFIG", "describe", "first_process", "resume_process"]

CONFIG = {"configurable": {"thread_id": "report-17-approval"}}


class State(TypedDict, total=False):
    approved: str
    published: Annotated[list[str], operator.add]


@dataclass(frozen=True)
class RunContext:
    """What the nodes need from the process they run in, given to `invoke(context=...)`."""

    role: str
    stop: Callable[[str], None]  # a point where the parent may freeze this process
    ledger: Ledger
    receiver: sqlite3.Connection
    fence: int | None  # the token this process's claim won (None: it claimed nothing)
    fenced: bool  # the receiver checks the token


def review(state: State, runtime: Runtime[RunContext]) -> dict:
    """Ask for approval; on resume the node runs again from its start and gets the answer."""
    answer = interrupt("report-17")  # the document to approve: data in no language
    runtime.context.stop("reviewed")  # the resumers have loaded the same checkpoint here
    return {"approved": answer}


def publish(state: State, runtime: Runtime[RunContext]) -> dict:
    """The effect: write the report through the receiver, under this process's token."""
    hooks = runtime.context
    fence = hooks.fence or 0
    body = f"{hooks.role}/{fence}"  # the document's text as data, in no language: writer/token
    receive = receive_fenced if hooks.fenced else receive_unfenced
    applied = receive(hooks.receiver, hooks.role, fence, body)
    hooks.ledger.line("publish", "ran", role=hooks.role, fence=fence, applied=applied)
    return {"published": [f"{hooks.role}: {'applied' if applied else 'refused'}"]}


def build() -> CompiledStateGraph:
    """START → review → publish → END, compiled without a checkpointer."""
    builder = StateGraph(State, context_schema=RunContext)
    builder.add_node("review", review)
    builder.add_node("publish", publish)
    builder.add_edge(START, "review")
    builder.add_edge("review", "publish")
    builder.add_edge("publish", END)
    return builder.compile()


SHAPE = build()  # compiled once, in the trial server


def context(job: dict, stop: Callable[[str], None], fence: int | None = None) -> RunContext:
    receiver = connect(job["run_dir"], RECEIVER_FILE)
    return RunContext(job["role"], stop, Ledger(job["run_dir"]), receiver, fence, job["fenced"])


def between_writes(saver: SqliteSaver, gate: Gate) -> Callable[[str], None]:
    """The gate, taken while holding the saver's lock: LangGraph saves checkpoints from a
    background thread, and a process frozen in the middle of one would hold the file's write
    lock (that is the `locked` case, on purpose; here it must not happen by chance)."""

    def stop(point: str) -> None:
        with saver.lock:
            gate(point)

    return stop


def first_process(job: dict) -> None:
    """Run the graph to its interrupt, saving each step (durability sync), and exit."""
    gate = Gate(Trace(job["run_dir"], job["role"]), job)
    graph = with_saver(SHAPE, open_saver(job["run_dir"]))
    graph.invoke({"published": []}, CONFIG, durability="sync", context=context(job, gate))


def hold_lock_at_first_commit(saver_conn: sqlite3.Connection, gate: Gate) -> None:
    """Stop at the first COMMIT of a write: the file's write lock is held until it runs."""
    held = []

    def before(sql: str) -> None:
        if sql.startswith("COMMIT") and saver_conn.in_transaction and not held:
            held.append(sql)
            gate(LOCK_POINT)

    saver_conn.set_trace_callback(before)


def resume_process(job: dict) -> None:
    """Resume the thread with Command(resume=...): claim it first if the job says so."""
    trace = Trace(job["run_dir"], job["role"])
    gate = Gate(trace, job)
    fence = None
    if job["claim"]:
        tasks = connect(job["run_dir"], TASKS_FILE)
        now = lab_now(job["run_dir"])
        fence = claim_lease(tasks, job["role"], now, job["lease_ms"], gate)
        trace.event("claim", won=fence is not None, fence=fence, lab_ms=now)
        if fence is None:
            report(job, claimed=False, ran=False)
            return
        gate("claimed")
    saver = open_saver(job["run_dir"], timeout=job["lock_timeout"])
    graph = with_saver(SHAPE, saver)
    found = list(graph.get_state(CONFIG).next)
    if job["hold_lock"]:
        hold_lock_at_first_commit(saver.conn, gate)
    result = graph.invoke(
        Command(resume="approved"),
        CONFIG,
        durability="sync",
        context=context(job, between_writes(saver, gate), fence),
    )
    report(
        job,
        claimed=fence is not None,
        fence=fence,
        ran=True,
        found_next=found,
        published=result.get("published", []),
    )


def describe(job: dict) -> None:
    """The thread's checkpoints decoded through LangGraph's own API, each with its parent."""
    saver = open_saver(job["run_dir"])
    graph = with_saver(SHAPE, saver)
    decoded = checkpoint_report(graph, saver, CONFIG)
    parents = {
        snap.config["configurable"]["checkpoint_id"]: (
            snap.parent_config["configurable"]["checkpoint_id"] if snap.parent_config else None
        )
        for snap in graph.get_state_history(CONFIG)
    }
    for checkpoint in decoded["checkpoints"]:
        checkpoint["parent"] = parents[checkpoint["checkpoint_id"]]
    report(job, **decoded)
