"""Study 004's graphs, run inside preloaded worker processes (this module imports LangGraph).

Two graphs: linear a → b → c → d, and parallel start → p1, p2, p3 → join. Every node writes a
`start` and an `end` line to the ledger and returns its state update. The target node (c, or
p3) stops at a kill point between its two lines and waits for the parent, who kills it with
SIGKILL. A worker reports what it saw in `<role>.json`; the parent reads it from the folder.
"""

from __future__ import annotations

import operator
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, TypedDict

from langgraph.errors import EmptyInputError
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from labkit.bench.checkpoints import (
    checkpoint_report,
    open_checkpointer,
    open_saver,
    with_saver,
)
from labkit.bench.folders import scratch_run_dir
from labkit.bench.gate import Gate, report
from labkit.bench.ledger import Ledger
from labkit.bench.trace import Trace

__all__ = ["AFTER_B", "GRAPH_NODES", "TARGET_NODE", "clean_run", "describe", "first_run", "recover"]

NodeHook = Callable[[str], None]

GRAPH_NODES = {"linear": ("a", "b", "c", "d"), "parallel": ("start", "p1", "p2", "p3", "join")}
TARGET_NODE = {"linear": "c", "parallel": "p3"}
AFTER_B = "put:step 2"  # the linear graph's put() of the checkpoint that follows b's step
CONFIG = {"configurable": {"thread_id": "study-004"}}


def thread_config(job: dict) -> dict:
    """The trial's thread: CONFIG's, or the job's own where one Postgres schema holds the
    threads of a whole matrix (`job["thread_id"]`)."""
    return {"configurable": {"thread_id": job["thread_id"]}} if "thread_id" in job else CONFIG


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def ignore(node: str) -> None:
    """A node hook that does nothing."""


@dataclass(frozen=True)
class RunContext:
    """What the nodes need from the process they run in, given to `invoke(context=...)`.

    The graphs are compiled once, before any worker exists; a worker brings its own ledger
    handle and kill hooks here, and LangGraph never saves any of it in a checkpoint."""

    ledger: Ledger
    inside: NodeHook = ignore  # between the node's `start` and `end` lines
    ended: NodeHook = ignore  # after its `end` line


def ledger_node(name: str) -> Callable[[State, Runtime[RunContext]], dict]:
    """A node: ledger `start`, `inside(name)`, ledger `end`, `ended(name)`, then its update."""

    def run(state: State, runtime: Runtime[RunContext]) -> dict:
        hooks = runtime.context
        hooks.ledger.line(name, "start")
        hooks.inside(name)
        hooks.ledger.line(name, "end")
        hooks.ended(name)
        return {"log": [name]}

    return run


def build(graph: str) -> CompiledStateGraph:
    """The graph's shape, compiled without a checkpointer."""
    builder = StateGraph(State, context_schema=RunContext)
    for name in GRAPH_NODES[graph]:
        builder.add_node(name, ledger_node(name))
    if graph == "linear":
        for before, after in zip((START, "a", "b", "c"), ("a", "b", "c", "d"), strict=True):
            builder.add_edge(before, after)
        builder.add_edge("d", END)
    else:
        builder.add_edge(START, "start")
        for branch in ("p1", "p2", "p3"):
            builder.add_edge("start", branch)
            builder.add_edge(branch, "join")
        builder.add_edge("join", END)
    return builder.compile()


# Compiled once, when the trial server imports this module: every worker forked from the server
# finds them ready (building and compiling costs a fresh worker about 10 ms) and only attaches
# its own checkpointer connection.
SHAPES = {graph: build(graph) for graph in GRAPH_NODES}


def compiled(job: dict, on_put: Callable[[dict], None] | None = None) -> CompiledStateGraph:
    """The job's graph on a checkpointer connection of this process (opened after the fork);
    `on_put(metadata)` is called as each put() starts."""
    return with_saver(SHAPES[job["graph"]], open_checkpointer(job, on_put))


def warm_up() -> None:
    """Run each graph once, here, in a throwaway folder: LangGraph sets some of its machinery up
    on first use, and every worker forked afterwards finds it done instead of doing it again.
    The folder is a run folder in the runs home, so `clean` removes one the server left."""
    with scratch_run_dir(prefix="warm-up-") as folder:
        for graph in SHAPES:
            saver, ledger = open_saver(folder), Ledger(folder)
            config = {"configurable": {"thread_id": graph}}
            try:
                with_saver(SHAPES[graph], saver).invoke(
                    {"log": []}, config, durability="sync", context=RunContext(ledger)
                )
            finally:  # nothing of it may be inherited by the workers
                saver.conn.close()
                ledger.close()


def first_run(job: dict) -> None:
    """Run the graph from its input; the target node stops at its kill point for the parent."""
    target = TARGET_NODE[job["graph"]]
    gate = Gate(Trace(job["run_dir"], job["role"]), job)
    done = {node: threading.Event() for node in GRAPH_NODES[job["graph"]]}

    def inside(node: str) -> None:
        if node != target:
            return
        if job["kill_moment"] == "others_done":  # let p1 and p2 write `end` and return first
            for other in ("p1", "p2"):
                done[other].wait(timeout=30)
        gate(f"inside:{node}")

    def saving(metadata: dict) -> None:  # in LangGraph's background thread: a kill point too
        gate(f"put:step {metadata.get('step')}")

    hooks = RunContext(Ledger(job["run_dir"]), inside, ended=lambda node: done[node].set())
    config = thread_config(job)
    graph = compiled(job, saving if job["kill_moment"] == "checkpoint_after_b" else None)
    result = graph.invoke({"log": []}, config, durability=job["mode"], context=hooks)
    report(job, log=result["log"])


def recover(job: dict) -> None:
    """A fresh process resumes the thread with `invoke(None)`: from the last saved checkpoint."""
    try:
        hooks = RunContext(Ledger(job["run_dir"]))
        config = thread_config(job)
        result = compiled(job).invoke(None, config, durability=job["mode"], context=hooks)
    except EmptyInputError as error:  # nothing saved: there is nothing to resume
        report(job, resumed=False, error=f"{type(error).__name__}: {error}")
    else:
        report(job, resumed=True, log=result["log"])


def clean_run(job: dict) -> None:
    """A run with no kill, timed inside the worker: what each durability mode costs."""
    graph, hooks = compiled(job), RunContext(Ledger(job["run_dir"]))
    started = time.perf_counter()
    config = thread_config(job)
    graph.invoke({"log": []}, config, durability=job["mode"], context=hooks)
    seconds = time.perf_counter() - started
    report(job, seconds=seconds, checkpoints=len(list(graph.checkpointer.list(config))))


def describe(job: dict) -> None:
    """Decode the checkpoint file through LangGraph's own API, for the views."""
    saver = open_saver(job["run_dir"])
    report(job, **checkpoint_report(with_saver(SHAPES[job["graph"]], saver), saver, CONFIG))
