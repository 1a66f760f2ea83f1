"""Study 001's graphs, run in worker processes (this module imports LangGraph).

`combined`: one node creates the ticket, then calls `interrupt()` for a receipt review.
`split`: prepare → approve (the interrupt, before any side effect) → execute (creates the
ticket) → verify. `mark_first`: the split layout, but execute first commits a "filed" mark in
its own table and only then asks for the ticket; a re-run that finds the mark skips (at most
once). The key strategy decides the operation key: `fresh`, a new UUID each time the node runs;
`stable`, the operation id fixed in the first input. Every ticket the node gets back is appended
to the ledger, so the parent can count node runs and receipts after any kill.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from labkit.bench.checkpoints import checkpoint_report, open_saver, with_saver
from labkit.bench.gate import Gate, report
from labkit.bench.ledger import Ledger
from labkit.bench.store import connect
from labkit.bench.tickets import Tickets
from labkit.bench.trace import Trace
from labkit.studies.interrupt_resume.contract import (
    FIRST_INPUT,
    NOTHING_SAVED,
    TENANT,
    key_function,
)

__all__ = ["first_process", "resume_process", "same_process"]

CONFIG = {"configurable": {"thread_id": "workflow-1"}}
FILED_FILE = "filed.db"  # mark_first's own table of the operations it filed


class State(TypedDict, total=False):
    operation_id: str
    title: str
    approved: bool
    ticket_id: int
    receipt_seen: bool


def no_stop(point: str) -> None:
    """No kill points (the run in one process)."""


class Filed:
    """The mark_first layout's own record of the operations it filed: its own SQLite file,
    apart from the ticket service and the checkpointer, made only when a node marks one."""

    def __init__(self, run_dir: str) -> None:
        self.path = os.path.join(run_dir, FILED_FILE)

    def mark(self, key: str) -> bool:
        """Record the operation as filed, committed at once; False if a run already had."""
        with contextlib.closing(connect(self.path)) as db:
            db.execute("CREATE TABLE IF NOT EXISTS filed (op_key TEXT PRIMARY KEY)")
            return db.execute("INSERT OR IGNORE INTO filed VALUES (?)", (key,)).rowcount == 1


@dataclass(frozen=True)
class RunContext:
    """What the nodes need from the process they run in, given to `invoke(context=...)`: the
    graphs are compiled once, in the trial server, and the key strategy is the job's."""

    tickets: Tickets
    ledger: Ledger
    operation_key: Callable[[State], str]
    stop: Callable[[str], None] = no_stop  # a kill point: the worker's gate
    filed: Filed | None = None  # mark_first's own record (for_job gives every job one)

    @classmethod
    def for_job(cls, job: dict, gate: Gate | None = None) -> RunContext:
        tickets, ledger = Tickets(job["run_dir"]), Ledger(job["run_dir"])
        return cls(tickets, ledger, key_function(job), gate or no_stop, Filed(job["run_dir"]))


def create_ticket(state: State, node: str, hooks: RunContext) -> int:
    """The side effect, with kill points on both sides of it."""
    hooks.stop("before_create")
    key = hooks.operation_key(state)
    ticket_id = hooks.tickets.create(TENANT, key, state["title"])
    hooks.ledger.line(node, "ticket", ticket_id=ticket_id, op_key=key)
    hooks.stop("after_create")
    return ticket_id


def create_and_review(state: State, runtime: Runtime[RunContext]) -> dict:
    ticket_id = create_ticket(state, "create_and_review", runtime.context)
    # A receipt review AFTER the ticket exists: not permission to create it.
    seen = interrupt({"ticket_id": ticket_id, "stage": "receipt_review"})
    return {"ticket_id": ticket_id, "receipt_seen": seen is True}


def prepare(state: State) -> dict:
    return {"title": state["title"].strip()}


def approve(state: State) -> dict:  # the interrupt comes before any side effect
    return {"approved": interrupt({"stage": "approval", "title": state["title"]}) is True}


def execute(state: State, runtime: Runtime[RunContext]) -> dict:
    if not state["approved"]:
        return {}
    return {"ticket_id": create_ticket(state, "execute", runtime.context)}


def mark_then_execute(state: State, runtime: Runtime[RunContext]) -> dict:
    """execute, kept from filing twice by a mark committed BEFORE it asks for the ticket: a
    re-run that finds the mark skips, so a kill between the mark and the ticket loses it."""
    hooks = runtime.context
    if state["approved"] and not hooks.filed.mark(hooks.operation_key(state)):
        return {}  # an earlier run marked it: taken as filed
    return execute(state, runtime)


def verify(state: State, runtime: Runtime[RunContext]) -> dict:
    ids = [row[0] for row in runtime.context.tickets.rows()]
    return {"receipt_seen": state.get("ticket_id") in ids}


LAYOUTS = {
    "combined": [("create_and_review", create_and_review)],
    "split": [("prepare", prepare), ("approve", approve), ("execute", execute), ("verify", verify)],
    "mark_first": [
        ("prepare", prepare),
        ("approve", approve),
        ("execute", mark_then_execute),
        ("verify", verify),
    ],
}


def build(layout: str) -> CompiledStateGraph:
    """The layout's nodes in a line, compiled without a checkpointer."""
    builder = StateGraph(State, context_schema=RunContext)
    names = [name for name, _ in LAYOUTS[layout]]
    for name, step in LAYOUTS[layout]:
        builder.add_node(name, step)
    for before, after in zip([START, *names], [*names, END], strict=True):
        builder.add_edge(before, after)
    return builder.compile()


SHAPES = {layout: build(layout) for layout in LAYOUTS}  # compiled once, in the trial server


def sqlite_graph(job: dict) -> tuple[CompiledStateGraph, SqliteSaver]:
    """The job's graph on this process's own SqliteSaver, and the saver (to decode the file)."""
    saver = open_saver(job["run_dir"])
    return with_saver(SHAPES[job["layout"]], saver), saver


def same_process(job: dict) -> None:
    """The study itself: InMemorySaver, interrupt and resume in one process."""
    graph = with_saver(SHAPES[job["layout"]], InMemorySaver())
    hooks = RunContext.for_job(job)
    paused = graph.invoke(FIRST_INPUT, CONFIG, context=hooks)
    before = len(hooks.tickets.rows())
    result = graph.invoke(Command(resume=job["approval"]), CONFIG, context=hooks)  # one click
    report(
        job,
        paused="__interrupt__" in paused,
        before_resume=before,
        resumes=1,
        receipt_seen=result.get("receipt_seen"),
    )


def first_process(job: dict) -> None:
    """Process 1: run until the interrupt is saved, stop at `paused` if told to, then exit."""
    gate = Gate(Trace(job["run_dir"], job["role"]), job)
    graph, _ = sqlite_graph(job)
    hooks = RunContext.for_job(job, gate)
    paused = graph.invoke(FIRST_INPUT, CONFIG, durability="sync", context=hooks)
    gate("paused")
    report(job, paused="__interrupt__" in paused)


def resume_process(job: dict) -> None:
    """A later process: look at the saved thread, then resume it (re-running what a kill cut
    off). In the split layouts the ticket is created here, so its kill points are here too."""
    graph, saver = sqlite_graph(job)
    hooks = RunContext.for_job(job, Gate(Trace(job["run_dir"], job["role"]), job))

    resumes = 0

    def resume_with(graph_input: object) -> dict:
        nonlocal resumes
        resumes += isinstance(graph_input, Command)
        return graph.invoke(graph_input, CONFIG, durability="sync", context=hooks)

    seen = graph.get_state(CONFIG)
    found = {"next": list(seen.next), "interrupts": [repr(i.value) for i in seen.interrupts]}
    checkpoints = checkpoint_report(graph, saver, CONFIG)
    if not seen.next and not seen.values:
        report(job, found=found, checkpoints=checkpoints, resumed_how=[NOTHING_SAVED])
        return
    answer = Command(resume=job["approval"])
    if seen.interrupts:
        result, how = resume_with(answer), [f"Command(resume={job['approval']})"]
    else:  # killed before an interrupt was saved: run again from the last checkpoint
        result, how = resume_with(None), ["invoke(None)"]
        if "__interrupt__" in result:  # it reached the interrupt this time: the reviewer says yes
            result = resume_with(answer)
            how.append(f"Command(resume={job['approval']})")
    report(
        job,
        found=found,
        checkpoints=checkpoints,
        resumed_how=how,
        resumes=resumes,
        receipt_seen=result.get("receipt_seen"),
    )
