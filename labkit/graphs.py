"""Study 004's graphs, run inside preloaded worker processes (this module imports LangGraph).

Two graphs: linear a → b → c → d, and parallel start → p1, p2, p3 → join. Every node writes a
`start` and an `end` line to the ledger and returns its state update. The target node (c, or
p3) stops at a kill point between its two lines and waits for the parent, who kills it with
SIGKILL. A worker reports what it saw in `<role>.json`; the parent reads it from the folder.
"""

from __future__ import annotations

import operator
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Annotated, TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.errors import EmptyInputError
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from labkit.ledger import Ledger
from labkit.trace import Trace
from labkit.worker import Gate, report

__all__ = ["GRAPH_NODES", "TARGET_NODE", "clean_run", "describe", "first_run", "recover"]

NodeHook = Callable[[str], None]

GRAPH_NODES = {"linear": ("a", "b", "c", "d"), "parallel": ("start", "p1", "p2", "p3", "join")}
TARGET_NODE = {"linear": "c", "parallel": "p3"}
CHECKPOINT_FILE = "checkpoints.db"
CONFIG = {"configurable": {"thread_id": "study-004"}}


class State(TypedDict):
    log: Annotated[list[str], operator.add]


class SlowSqliteSaver(SqliteSaver):
    """A SqliteSaver whose put() sleeps first: a stand-in for a checkpointer across a network."""

    def __init__(self, conn: sqlite3.Connection, delay_ms: int) -> None:
        super().__init__(conn)
        self.delay_s = delay_ms / 1000

    def put(self, *args, **kwargs):  # the saver's own signature
        time.sleep(self.delay_s)
        return super().put(*args, **kwargs)


def open_saver(run_dir: str, slow_ms: int = 0, timeout: float = 5.0) -> SqliteSaver:
    """This process's own connection to the checkpoint file (opened after the fork); `timeout`
    is how long SQLite waits for another writer's lock before `database is locked`."""
    path = os.path.join(run_dir, CHECKPOINT_FILE)
    conn = sqlite3.connect(path, timeout=timeout, check_same_thread=False)
    return SlowSqliteSaver(conn, slow_ms) if slow_ms else SqliteSaver(conn)


def ignore(node: str) -> None:
    """A node hook that does nothing."""


def build(
    graph: str, ledger: Ledger, inside: NodeHook = ignore, ended: NodeHook = ignore
) -> StateGraph:
    """The graph's shape; each node: ledger `start`, `inside(node)`, ledger `end`, `ended(node)`,
    then its state update."""

    def make(node: str) -> NodeHook:
        def run(state: State) -> dict:
            ledger.line(node, "start")
            inside(node)
            ledger.line(node, "end")
            ended(node)
            return {"log": [node]}

        return run

    builder = StateGraph(State)
    for node in GRAPH_NODES[graph]:
        builder.add_node(node, make(node))
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
    return builder


def compiled(job: dict, inside: NodeHook = ignore, ended: NodeHook = ignore) -> CompiledStateGraph:
    """The job's graph on this process's own checkpointer connection."""
    saver = open_saver(job["run_dir"], job.get("slow_ms", 0))
    return build(job["graph"], Ledger(job["run_dir"]), inside, ended).compile(checkpointer=saver)


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

    graph = compiled(job, inside, ended=lambda node: done[node].set())
    result = graph.invoke({"log": []}, CONFIG, durability=job["mode"])
    report(job, log=result["log"])


def recover(job: dict) -> None:
    """A fresh process resumes the thread with `invoke(None)`: from the last saved checkpoint."""
    try:
        result = compiled(job).invoke(None, CONFIG, durability=job["mode"])
    except EmptyInputError as error:  # nothing saved: there is nothing to resume
        report(job, resumed=False, error=f"{type(error).__name__}: {error}")
    else:
        report(job, resumed=True, log=result["log"])


def clean_run(job: dict) -> None:
    """A run with no kill, timed inside the worker: what each durability mode costs."""
    graph = compiled(job)
    started = time.perf_counter()
    graph.invoke({"log": []}, CONFIG, durability=job["mode"])
    report(job, seconds=time.perf_counter() - started)


def describe(job: dict) -> None:
    """Decode the checkpoint file through LangGraph's own API, for the views."""
    saver = open_saver(job["run_dir"])
    graph = build(job["graph"], Ledger(job["run_dir"])).compile(checkpointer=saver)  # no node runs
    report(job, **checkpoint_report(graph, saver, CONFIG))


def checkpoint_report(graph: CompiledStateGraph, saver: SqliteSaver, config: dict) -> dict:
    """A thread's checkpoints (from `get_state_history`) and `writes` rows (decoded with the
    saver's own serializer). Writes whose checkpoint was never saved are flagged: recovery
    ignores them."""
    checkpoints = [
        {
            "checkpoint_id": snap.config["configurable"]["checkpoint_id"],
            "step": snap.metadata.get("step"),
            "source": snap.metadata.get("source"),
            "next": list(snap.next),
            "interrupts": [repr(i.value) for task in snap.tasks for i in task.interrupts],
        }
        for snap in graph.get_state_history(config)
    ]
    saved = {c["checkpoint_id"] for c in checkpoints}
    rows = (
        saver.conn.execute(
            "SELECT checkpoint_id, task_id, idx, channel, type, value FROM writes ORDER BY rowid"
        ).fetchall()
        if has_table(saver.conn, "writes")
        else []
    )
    writes = [
        {
            "checkpoint_id": cid,
            "task_id": task[:8],
            "idx": idx,
            "channel": channel,
            "value": repr(saver.serde.loads_typed((kind, value))),
            "checkpoint_saved": cid in saved,
        }
        for cid, task, idx, channel, kind, value in rows
    ]
    return {"checkpoints": checkpoints, "writes": writes}


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    query = "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?"
    return conn.execute(query, (name,)).fetchone() is not None
