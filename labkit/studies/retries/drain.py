"""Lesson 8, a graceful drain: stop a running graph at a step boundary, resume it elsewhere.

The graph a → b → c → d; every node writes ledger `start`, stops at its kill point (the parent
may signal it there), works `work_ms`, stops again as its work is done (where the parent judges
a grace period, on the worker's own clock: `runs.ended_within`), writes `end`; the first process
stops once more as its serve returns. The worker runs it through a `serve` function, as an app
would: the lab's turns SIGTERM into `RunControl.request_drain()`, so the run stops after b,
saved, with `GraphDrained`; a reader's own (the exercise) is their source, run here. The lab's
runs save each step before the next (durability "sync"), so a kill loses exactly the step it
lands in; a drain saves in every mode (LangGraph's default "async" too, which a reader's `serve`
may keep). A fresh process then resumes with `invoke(None)`. The nodes reach their worker's
hooks through a module variable (each worker is a process with one job), so a reader's `serve`
calls `graph.invoke` exactly as an app does; whatever it returns is theirs (the lab reads the
ledger and the checkpoints, not the value). Imports LangGraph.
"""

from __future__ import annotations

import operator
import signal
import time
from collections.abc import Callable
from typing import Annotated, TypedDict

from langgraph.errors import EmptyInputError, GraphDrained
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import RunControl, Runtime

from labkit.bench.checkpoints import open_saver, with_saver
from labkit.bench.gate import report
from labkit.studies.retries.hooks import Hooks
from labkit.studies.retries.spec import SERVE_FILE, NodeFailed

__all__ = ["NODES", "SERVED", "SIGNALLED_NODE", "first_process", "resume_process", "serve"]

NODES = ("a", "b", "c", "d")
SIGNALLED_NODE = "b"
SERVED = "served"  # the first process's last stop: its serve has returned (or raised)
FAILING_NODE = "a"  # where a run that fails by itself fails (DrainSpec.fails), before any stop
CONFIG = {"configurable": {"thread_id": "drain-1"}}
_hooks: Hooks | None = None  # this worker's, set when it gets its job


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def node(name: str) -> Callable[[State, Runtime], dict]:
    def run(state: State, runtime: Runtime) -> dict:
        job = _hooks.job
        _hooks.ledger.line(name, "start")
        if job["fails"] and name == FAILING_NODE and job["role"] == "first":
            raise NodeFailed(f"node {name} failed: the report service did not answer")
        _hooks.gate(f"inside:{name}")
        if job["signal"] == "drain" and name == SIGNALLED_NODE and job["role"] == "first":
            runtime.control.request_drain("deploy")  # what a server's shutdown hook would call
        time.sleep(job["work_ms"] / 1000)  # a signal's handler runs meanwhile; the sleep goes on
        _hooks.gate(f"worked:{name}")  # its work done, not yet ended: a grace is judged here
        _hooks.ledger.line(name, "end")
        return {"log": [name]}

    return run


def build() -> CompiledStateGraph:
    builder = StateGraph(State)
    for name in NODES:
        builder.add_node(name, node(name))
    for before, after in zip((START, *NODES), (*NODES, END), strict=True):
        builder.add_edge(before, after)
    return builder.compile()


SHAPE = build()  # compiled once, in the trial server


def serve(graph: CompiledStateGraph, inputs: dict | None, config: dict) -> dict | None:
    """The lab's drain-safe way to run a graph: SIGTERM asks the run to drain at the next
    step boundary; a drained run ends quietly, saved, to be resumed elsewhere."""
    control = RunControl()
    signal.signal(signal.SIGTERM, lambda signum, frame: control.request_drain("SIGTERM"))
    try:
        return graph.invoke(inputs, config, control=control, durability="sync")
    except GraphDrained:
        return None


def plain_serve(graph: CompiledStateGraph, inputs: dict | None, config: dict) -> dict | None:
    """Not drain-safe: SIGTERM's default action ends the process where it stands."""
    return graph.invoke(inputs, config, durability="sync")


def readers_serve(source: str) -> Callable:
    """The reader's `serve`, from its source: the first function the source defines (as the
    check reads it), not a name it imported (only the function's own source runs here)."""
    namespace: dict = {}
    exec(compile(source, SERVE_FILE, "exec"), namespace)
    return next(
        v
        for v in namespace.values()
        if getattr(v, "__code__", None) and v.__code__.co_filename == SERVE_FILE
    )


def graph_for(job: dict) -> CompiledStateGraph:
    global _hooks
    _hooks = Hooks.for_job(job)
    return with_saver(SHAPE, open_saver(job["run_dir"]))


def first_process(job: dict) -> None:
    """Run the graph through the job's serve; the parent signals it while b works."""
    graph = graph_for(job)
    if job["serve_source"] is not None:
        run = readers_serve(job["serve_source"])
    else:
        run = serve if job["drain_safe"] else plain_serve
    try:
        run(graph, {"log": []}, CONFIG)
    finally:
        _hooks.gate(SERVED)  # what a serve does after its run is timed against a grace too


def resume_process(job: dict) -> None:
    """A fresh process: where the saved thread stands, then invoke(None) from there."""
    graph = graph_for(job)
    found = list(graph.get_state(CONFIG).next)
    try:
        result = graph.invoke(None, CONFIG, durability="sync")
    except EmptyInputError as error:
        report(job, found_next=found, resumed=False, error=f"{type(error).__name__}: {error}")
    else:
        report(job, found_next=found, resumed=True, log=result["log"])
