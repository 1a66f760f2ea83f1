"""A LangGraph graph, as lessons 3 and 4 run theirs: in a worker forked from the trial server,
on a SqliteSaver of the run's own (`checkpoints.db`), whose every `put` and `put_writes` is a
crash point (`RecordedSaver`), beside the commits and fsyncs of the graph's nodes.

The target names a compiled graph, a `StateGraph` (compiled here) or a function of no
arguments that returns either; its module may define `INPUT` (the first input, `{}` if not)
and `context(run_dir)` (the context the nodes get), or the target is a dict that says all
three: {"graph": ..., "input": ..., "context": ...}. Every `interrupt()` is answered
`Command(resume=True)`, as a reviewer who approves. Recovery is `invoke(None)` in a fresh
process, then the same answers. Imports LangGraph: only the trial server and its workers.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from labkit.bench.checkpoints import with_saver
from labkit.studies.explorer.checker import CHECKPOINT_FILE
from labkit.studies.explorer.record import CrashPoints
from labkit.studies.explorer.target import BadTarget, load, named

__all__ = ["RecordedSaver", "recover", "run_first"]

CONFIG = {"configurable": {"thread_id": "explored"}}
APPROVE = Command(resume=True)


class RecordedSaver(SqliteSaver):
    """A SqliteSaver with a crash point after each checkpoint and each task's writes it saves."""

    points: CrashPoints | None = None
    nodes: dict[str, str] = {}  # node name -> where its function is (file:line)

    def put(self, config, checkpoint, metadata, new_versions):  # noqa: ANN001, ANN201 - LangGraph's
        saved = super().put(config, checkpoint, metadata, new_versions)
        if self.points is not None:
            step = metadata.get("step")
            what = f"checkpoint of step {step} ({metadata.get('source')})"
            self.points.hit("put", what, hold=self.lock)  # no other save lands meanwhile
        return saved

    def put_writes(self, config, writes, task_id, task_path=""):  # noqa: ANN001, ANN201
        super().put_writes(config, writes, task_id, task_path)
        if self.points is not None:
            node = task_path.rpartition(", ")[2]
            what = f"writes of node {node}" if node else "writes of the resume answer"
            self.points.hit("put_writes", what, self.nodes.get(node), hold=self.lock)


@dataclass
class ReaderGraph:
    """The reader's graph (compiled), its first input, its nodes' context, and where its code
    is: the module's file and each node's function (file, first line)."""

    graph: CompiledStateGraph
    first_input: object
    context: object
    files: set[str]
    nodes: dict[str, tuple[str, int]]


def the_graph(job: dict) -> ReaderGraph:
    found, file, module = load(job["target"])
    said = found if isinstance(found, dict) else {}  # {"graph": ..., "input": ..., "context": ...}
    graph = said.get("graph", found)
    if callable(graph) and not hasattr(graph, "invoke") and takes_nothing(graph):
        graph = graph()
    if isinstance(graph, StateGraph):
        graph = graph.compile()
    if not isinstance(graph, CompiledStateGraph):
        raise BadTarget(
            f"{named(job['target'])} is not a LangGraph graph, nor a function of no arguments "
            f"that returns one (it is of type {type(graph).__name__!r})"
        )
    make_context = said.get("context", module.get("context"))
    context = make_context(job["run_dir"]) if callable(make_context) else None
    nodes = {}
    for name, node in graph.nodes.items():
        code = getattr(getattr(node.bound, "func", None), "__code__", None)
        if code is not None and not name.startswith("__"):
            nodes[name] = (code.co_filename, code.co_firstlineno)
    files = {file, *(path for path, _ in nodes.values())}
    return ReaderGraph(graph, said.get("input", module.get("INPUT", {})), context, files, nodes)


def takes_nothing(function: object) -> bool:
    """Whether `function` can be called with no arguments (a step, say, cannot)."""
    try:
        inspect.signature(function).bind()
    except (TypeError, ValueError):  # arguments it needs; a signature Python cannot tell
        return False
    return True


def open_saver(job: dict) -> RecordedSaver:
    import sqlite3  # after the commit watch: the saver's statements show the nodes' commits

    conn = sqlite3.connect(
        os.path.join(job["run_dir"], CHECKPOINT_FILE), timeout=5.0, check_same_thread=False
    )
    return RecordedSaver(conn)


def run_to_end(graph: CompiledStateGraph, first: object, job: dict, context: object) -> bool:
    """Invoke, answer every interrupt, and say whether the thread reached its end."""
    result = graph.invoke(first, CONFIG, durability=job["durability"], context=context)
    while "__interrupt__" in result:
        result = graph.invoke(APPROVE, CONFIG, durability=job["durability"], context=context)
    return not graph.get_state(CONFIG).next


def run_first(job: dict, points: CrashPoints) -> None:
    """Run the graph from its input to its end, with a crash point at every durable step."""
    watch = points.watch_commits(ignore=[CHECKPOINT_FILE])  # before the nodes' connections
    points.watch_fsync()
    reader = the_graph(job)
    points.reader_files |= reader.files
    saver = open_saver(job)
    saver.points = points
    saver.nodes = {n: f"{os.path.basename(f)}:{line}" for n, (f, line) in reader.nodes.items()}
    graph = with_saver(reader.graph, saver)
    graph.get_state(CONFIG)  # the saver makes its tables: set-up, as the context's files were
    points.arm()
    run_to_end(graph, reader.first_input, job, reader.context)
    watch.observe()


def recover(job: dict, trace: object) -> bool:
    """A fresh process resumes the thread: `invoke(None)`, or the answer to a saved interrupt."""
    reader = the_graph(job)
    graph = with_saver(reader.graph, open_saver(job))
    pending = graph.get_state(CONFIG).interrupts
    return run_to_end(graph, APPROVE if pending else None, job, reader.context)
