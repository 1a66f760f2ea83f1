"""Lesson 8, node error handlers and issue #9002: a handler that already ran runs again on resume.

Two nodes start together: `reconcile` fails (ValueError) and its error handler `refund` pays a
refund at the payment service and writes `refunded`; `approve` waits for a person with
`interrupt()`. The first process stops at the interrupt with the refund paid; a fresh process
resumes with `Command(resume=True)`. Issue #9002 says the handler then runs a second time. The
handler is set with `add_node(..., error_handler=...)` or `StateGraph.set_node_defaults(...)`.
Runs in the trial server's forked workers (this module imports LangGraph).
"""

from __future__ import annotations

import operator
import uuid
from typing import Annotated, TypedDict

from langgraph.errors import NodeError
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from labkit.bench.checkpoints import open_saver, with_saver
from labkit.bench.gate import report
from labkit.studies.retries.hooks import Hooks

__all__ = ["SHAPES", "first_process", "resume_process"]

ORDER = "order-1"
CONFIG = {"configurable": {"thread_id": ORDER}}


class State(TypedDict, total=False):
    log: Annotated[list[str], operator.add]


def reconcile(state: State, runtime: Runtime[Hooks]) -> dict:
    runtime.context.ledger.line("reconcile", "failed")
    raise ValueError("the payment does not match the order")


def refund(state: State, error: NodeError, runtime: Runtime[Hooks]) -> dict:
    """The error handler: refund the order (a side effect), say so in the state."""
    hooks = runtime.context
    key = f"refund:{ORDER}" if hooks.job["keyed"] else uuid.uuid4().hex
    refund_id, new = hooks.charge(key, "refund 42.00 EUR")
    hooks.ledger.line(
        "refund",
        "ran",
        failed_node=error.node,
        error=type(error.error).__name__,  # on resume: a str, not the exception
        refund=refund_id,
        new=new,
    )
    return {"log": [f"refund #{refund_id}"]}


def approve(state: State, runtime: Runtime[Hooks]) -> dict:
    runtime.context.ledger.line("approve", "asked")
    answer = interrupt("send the refund notice?")
    runtime.context.ledger.line("approve", "answered", answer=answer)
    return {"log": ["approved"]}


def build(way: str) -> CompiledStateGraph:
    """reconcile (with the handler) beside approve, compiled without a checkpointer."""
    builder = StateGraph(State, context_schema=Hooks)
    if way == "defaults":
        builder.set_node_defaults(error_handler=refund)
        builder.add_node("reconcile", reconcile)
    else:
        builder.add_node("reconcile", reconcile, error_handler=refund)
    builder.add_node("approve", approve)
    for node in ("reconcile", "approve"):
        builder.add_edge(START, node)
        builder.add_edge(node, END)
    return builder.compile()


SHAPES = {way: build(way) for way in ("add_node", "defaults")}  # compiled once, in the server


def graph_for(job: dict) -> CompiledStateGraph:
    return with_saver(SHAPES[job["way"]], open_saver(job["run_dir"]))


def first_process(job: dict) -> None:
    """Run until approve's interrupt: reconcile has failed and its handler refunded by then."""
    graph = graph_for(job)
    result = graph.invoke({"log": []}, CONFIG, durability="sync", context=Hooks.for_job(job))
    state = graph.get_state(CONFIG)
    report(
        job,
        interrupted=bool(result.get("__interrupt__")),
        log=result.get("log", []),
        next=list(state.next),
    )


def resume_process(job: dict) -> None:
    """A fresh process answers the interrupt: does the handler run again?"""
    graph = graph_for(job)
    found = list(graph.get_state(CONFIG).next)
    result = graph.invoke(
        Command(resume=True), CONFIG, durability="sync", context=Hooks.for_job(job)
    )
    report(job, found_next=found, log=result.get("log", []))
