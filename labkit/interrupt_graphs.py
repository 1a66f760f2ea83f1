"""Study 001's graphs, run in worker processes (this module imports LangGraph).

`combined`: one node creates the ticket, then calls `interrupt()` for a receipt review.
`split`: prepare → approve (the interrupt, before any side effect) → execute (creates the
ticket) → verify. The key strategy decides the operation key: `fresh`, a new UUID each time the
node runs; `stable`, the operation id fixed in the first input. Every ticket the node gets back
is appended to the ledger, so the parent can count node runs and receipts after any kill.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt

from labkit.graphs import checkpoint_report, open_saver
from labkit.ledger import Ledger
from labkit.tickets import Tickets
from labkit.trace import Trace
from labkit.worker import Gate, report

__all__ = ["first_process", "resume_process", "same_process"]

CONFIG = {"configurable": {"thread_id": "workflow-1"}}
FIRST_INPUT = {"operation_id": "request-42/create-ticket/v1", "title": "Printer offline"}
TENANT = "team-A"


class State(TypedDict, total=False):
    operation_id: str
    title: str
    approved: bool
    ticket_id: int
    receipt_seen: bool


def key_function(job: dict) -> Callable[[State], str]:
    """Where the operation key comes from: fresh, stable, or the reader's own function."""
    if job["key"] == "custom":
        namespace: dict = {}
        exec(job["key_source"], namespace)  # the reader's own code, in the reader's own lab
        return namespace["operation_key"]
    if job["key"] == "stable":
        return lambda state: state["operation_id"]
    return lambda state: str(uuid.uuid4())


def build(job: dict, gate: Gate | None = None) -> StateGraph:
    """The job's layout, with kill points inside the node that creates the ticket."""
    tickets, ledger = Tickets(job["run_dir"]), Ledger(job["run_dir"])
    stop = gate or (lambda point: None)

    def create_ticket(state: State, node: str) -> int:
        stop("before_create")
        key = operation_key(state)
        ticket_id = tickets.create(TENANT, key, state["title"])
        ledger.line(node, "ticket", ticket_id=ticket_id, op_key=key)
        stop("after_create")
        return ticket_id

    operation_key = key_function(job)
    builder = StateGraph(State)
    if job["layout"] == "combined":

        def create_and_review(state: State) -> dict:
            ticket_id = create_ticket(state, "create_and_review")
            # A receipt review AFTER the ticket exists: not permission to create it.
            seen = interrupt({"ticket_id": ticket_id, "stage": "receipt_review"})
            return {"ticket_id": ticket_id, "receipt_seen": seen is True}

        builder.add_node("create_and_review", create_and_review)
        builder.add_edge(START, "create_and_review")
        builder.add_edge("create_and_review", END)
        return builder

    def prepare(state: State) -> dict:
        return {"title": state["title"].strip()}

    def approve(state: State) -> dict:  # the interrupt comes before any side effect
        return {"approved": interrupt({"stage": "approval", "title": state["title"]}) is True}

    def execute(state: State) -> dict:
        return {"ticket_id": create_ticket(state, "execute")} if state["approved"] else {}

    def verify(state: State) -> dict:
        ids = [row[0] for row in tickets.rows()]
        return {"receipt_seen": state.get("ticket_id") in ids}

    steps = [("prepare", prepare), ("approve", approve), ("execute", execute), ("verify", verify)]
    for name, step in steps:
        builder.add_node(name, step)
    for before, after in zip(
        [START, *[n for n, _ in steps]], [*[n for n, _ in steps], END], strict=True
    ):
        builder.add_edge(before, after)
    return builder


def sqlite_graph(job: dict, gate: Gate | None = None) -> tuple[CompiledStateGraph, SqliteSaver]:
    """The job's graph on this process's own SqliteSaver, and the saver (to decode the file)."""
    saver = open_saver(job["run_dir"])
    return build(job, gate).compile(checkpointer=saver), saver


def same_process(job: dict) -> None:
    """The study itself: InMemorySaver, interrupt and resume in one process."""
    graph = build(job).compile(checkpointer=InMemorySaver())
    paused = graph.invoke(FIRST_INPUT, CONFIG)
    before = len(Tickets(job["run_dir"]).rows())
    result = graph.invoke(Command(resume=True), CONFIG)
    report(
        job,
        paused="__interrupt__" in paused,
        before_resume=before,
        receipt_seen=result.get("receipt_seen"),
    )


def first_process(job: dict) -> None:
    """Process 1: run until the interrupt is saved, stop at `paused` if told to, then exit."""
    gate = Gate(Trace(job["run_dir"], job["role"]), job)
    graph, _ = sqlite_graph(job, gate)
    paused = graph.invoke(FIRST_INPUT, CONFIG, durability="sync")
    gate("paused")
    report(job, paused="__interrupt__" in paused)


def resume_process(job: dict) -> None:
    """A later process: look at the saved thread, then resume it (re-running what a kill cut
    off). In the split layout the ticket is created here, so its kill points are here too."""
    graph, saver = sqlite_graph(job, Gate(Trace(job["run_dir"], job["role"]), job))
    seen = graph.get_state(CONFIG)
    found = {"next": list(seen.next), "interrupts": [repr(i.value) for i in seen.interrupts]}
    checkpoints = checkpoint_report(graph, saver, CONFIG)
    if not seen.next and not seen.values:
        report(job, found=found, checkpoints=checkpoints, resumed_how="nothing saved to resume")
        return
    if seen.interrupts:
        result = graph.invoke(Command(resume=True), CONFIG, durability="sync")
        how = "Command(resume=True)"
    else:  # killed before an interrupt was saved: run again from the last checkpoint
        result, how = graph.invoke(None, CONFIG, durability="sync"), "invoke(None)"
        if "__interrupt__" in result:  # it reached the interrupt this time: the reviewer says yes
            result = graph.invoke(Command(resume=True), CONFIG, durability="sync")
            how += ", then Command(resume=True)"
    report(
        job,
        found=found,
        checkpoints=checkpoints,
        resumed_how=how,
        receipt_seen=result.get("receipt_seen"),
    )
