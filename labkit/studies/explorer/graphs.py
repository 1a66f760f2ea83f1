"""A LangGraph graph, as lessons 3 and 4 run theirs: in a worker forked from the trial server,
on a saver of the run's own (`savers`: SQLite's `checkpoints.db`, or Postgres in the run's
schema for a graph compiled with a Postgres saver), whose every `put` and `put_writes` is a
crash point, beside the commits and fsyncs of the graph's nodes.

The target names a compiled graph, a `StateGraph` (compiled here) or a function of no
arguments that returns either; its module may define `INPUT` (the first input, `{}` if not)
and `context(run_dir)` (the context the nodes get), or the target is a dict that says all
three: {"graph": ..., "input": ..., "context": ...}. Every `interrupt()` is answered with the
job's `resume` (True, as a reviewer who approves, unless the reader gives a value), what the
reader's `resume_by` function says of the interrupt's payload, or the next of their `resumes`
(`answers`). Recovery is `invoke(None)` in a fresh process, then the same answers (`running`).
A graph with an `async def` node runs as its reader runs it, with `ainvoke` (an event loop of
the worker's own), on the same recorded saver: its async
methods do the sync ones' work in the loop's thread, so the crash points are the same and no
saver thread (as `AsyncSqliteSaver` has) races a kill. Imports LangGraph: only the trial
server and its workers.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from concurrent.futures import Future
from contextvars import copy_context
from dataclasses import dataclass
from types import CodeType

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.pregel import Pregel
from langgraph.store.memory import InMemoryStore

from labkit.bench.checkpoints import with_saver
from labkit.studies.explorer import savers
from labkit.studies.explorer.answers import answered, answers
from labkit.studies.explorer.record import CrashPoints
from labkit.studies.explorer.running import config_of, run_to_end
from labkit.studies.explorer.savers import Recorded, note_replaced
from labkit.studies.explorer.states import CHECKPOINT_FILE
from labkit.studies.explorer.target import BadTarget, load, named, said_as

__all__ = ["open_saver", "recover", "run_first"]


def name_tasks() -> None:
    """Tell the saver each task's name before its writes are saved: LangGraph hands
    `put_writes` a task's id and path, and a @task's path is only numbers. The loop knows the
    task; the saver's thread does not. In a worker only (it changes LangGraph's loop)."""
    from langgraph.pregel._loop import PregelLoop

    real_put_writes = PregelLoop.put_writes
    if getattr(real_put_writes, "names_tasks", False):
        return

    def put_writes(loop: PregelLoop, task_id: str, writes: object, **kwargs: object) -> None:
        task = getattr(loop, "tasks", {}).get(task_id)
        if task is not None:
            Recorded.tasks[task_id] = (task.name, where_defined(task.proc))
        real_put_writes(loop, task_id, writes, **kwargs)

    put_writes.names_tasks = True
    PregelLoop.put_writes = put_writes


def run_in_order() -> None:
    """The tasks of a step and the saver's `put_writes` run at once, one after another, in the
    thread that hands them over, not side by side in LangGraph's background threads (#8039):
    where a kill lands, and what the other tasks did by then, is then the same in every run
    (issue 25, item 13). No window is hidden: a kill between a task's effect and its writes
    is the crash point at the effect, whatever ran beside it. Under durability "sync" a
    checkpoint's `put` runs in order too: LangGraph hands the input's checkpoint to a thread
    and starts the first step beside it, so a kill in that step found it saved in one run and
    not in the next (lost or duplicate by the machine's load); sync's promise, saved before
    the next step, is the order kept. Under "async" it is left to LangGraph, beside the next
    step (each crash state replayed twice, its rows marked when they differ). In a worker
    only."""
    from langgraph.pregel._executor import BackgroundExecutor

    real_submit = BackgroundExecutor.submit
    if getattr(real_submit, "in_order", False):
        return

    def submit(executor: BackgroundExecutor, fn: Callable, *args: object, **kwargs: object):  # noqa: ANN202
        owner = getattr(fn, "__self__", None)
        if (
            fn.__name__ == "run_with_retry"
            or (isinstance(owner, Recorded) and fn.__name__ == "put_writes")
            or (fn.__name__ == "_checkpointer_put_after_previous" and owner.durability == "sync")
        ):
            return done(fn, *args, **{k: v for k, v in kwargs.items() if not k.startswith("__")})
        return real_submit(executor, fn, *args, **kwargs)

    submit.in_order = True
    BackgroundExecutor.submit = submit
    map_in_order()


def map_in_order() -> None:
    """The same for LangChain's thread pool, whose `map` runs a ToolNode's tool calls of one
    message side by side: called one after another, in the calls' order. Else the n-th
    commit to a file is one tool's in this run and another's in the next, and a row judged
    on a kill at it names a line whose commit the killed run had not made (issue 25, item
    13). In a worker only."""
    from langchain_core.runnables.config import ContextThreadPoolExecutor

    def in_order(executor: object, fn: Callable, *iterables: object, **kwargs: object):  # noqa: ANN202
        futures = [done(fn, *args) for args in zip(*iterables, strict=False)]
        return (future.result() for future in futures)

    ContextThreadPoolExecutor.map = in_order


def done(fn: Callable, *args: object, **kwargs: object) -> Future:
    """`fn` called now (in a copy of this context, as the executor calls it), as a future
    that is done: its result, or what it raised."""
    future: Future = Future()
    try:
        future.set_result(copy_context().run(fn, *args, **kwargs))
    except BaseException as error:  # noqa: BLE001 - handed to whoever waits, as the executor does
        future.set_exception(error)
    return future


def where_defined(proc: object) -> str | None:
    """file:line of a task's function (the first step of what the task runs), or None: a
    look that cannot fail the run (a runnable's attribute may raise)."""
    try:
        code = getattr(proc, "steps", [proc])[0].func.__code__
    except Exception:
        return None
    return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"


def code_of(runnable: object) -> CodeType | None:
    """The code of a node's own function (`func`, or `afunc` for an `async def` node), or
    None: a look that cannot fail the run (a `.with_fallbacks` runnable looks an attribute up
    on what it wraps, and that can raise)."""
    try:
        functions = (getattr(runnable, name, None) for name in ("func", "afunc"))
        return next((f.__code__ for f in functions if hasattr(f, "__code__")), None)
    except Exception:  # noqa: BLE001 - the reader's runnable's own error: no source line, no more
        return None


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
    graph = made(said.get("graph", found), job)
    if isinstance(graph, StateGraph):
        graph = graph.compile()
    if not isinstance(graph, Pregel):  # a compiled StateGraph, or an @entrypoint's workflow
        raise BadTarget(
            f"{named(job['target'])} is not a LangGraph graph, nor a function of no arguments "
            f"or of a config that returns one (it is of type {type(graph).__name__!r})",
            "explore_not_graph",
            **said_as(job["target"]),
            kind=repr(type(graph).__name__),
        )
    make_context = said.get("context", module.get("context"))
    context = make_context(job["run_dir"]) if callable(make_context) else None
    nodes = {}
    for name, node in graph.nodes.items():
        code = code_of(node.bound)
        if code is not None and not name.startswith("__"):
            nodes[name] = (code.co_filename, code.co_firstlineno)
    files = {file, *(path for path, _ in nodes.values())}
    return ReaderGraph(graph, said.get("input", module.get("INPUT", {})), context, files, nodes)


def made(target: object, job: dict) -> object:
    """The graph a factory makes, as LangGraph's server calls one named in langgraph.json:
    with no arguments, or with the run's config; a `with` factory (a context manager) entered,
    and never left, as the worker ends with the run. An async factory is refused in one line:
    the graph it makes would belong to an event loop that is over by the time it runs. Any
    other target is itself."""
    if not callable(target) or hasattr(target, "invoke"):
        return target
    if async_factory(target):
        raise BadTarget(
            f"{named(job['target'])} makes its graph asynchronously (an async function or "
            "context manager); name the graph itself, or a function that returns it",
            "explore_async_factory",
            **said_as(job["target"]),
        )
    if takes_nothing(target):
        graph = target()
    elif takes_a_config(target):
        graph = target(config_of(job))
    else:
        return target
    return graph.__enter__() if hasattr(graph, "__enter__") else graph


def takes_a_config(function: object) -> bool:
    """Whether `function`'s one argument is a config (named so, or a RunnableConfig): a node
    named by mistake, which takes a state, is never called here."""
    try:
        [parameter] = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # more or fewer; a signature Python cannot tell
        return False
    return parameter.name == "config" or "RunnableConfig" in str(parameter.annotation)


def async_factory(function: object) -> bool:
    """An `async def`, or an `@asynccontextmanager` (its function an async generator)."""
    inner = getattr(function, "__wrapped__", function)
    return inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(inner)


def takes_nothing(function: object) -> bool:
    """Whether `function` can be called with no arguments (a step, say, cannot)."""
    try:
        inspect.signature(function).bind()
    except (TypeError, ValueError):  # arguments it needs; a signature Python cannot tell
        return False
    return True


def refuse_what_keeps_nothing(graph: CompiledStateGraph, job: dict) -> None:
    """A graph compiled on an InMemorySaver keeps nothing across a crash (lesson 4), and one
    compiled with `checkpointer=False` saves nothing at all: given a SqliteSaver here, either
    would look safe. Nor does an InMemoryStore keep what the nodes put in it, and the
    explorer cannot read it: green would be a lie. Said in one line, before it runs."""
    if graph.checkpointer is False:
        raise BadTarget(
            f"{named(job['target'])} is compiled with checkpointer=False, which saves nothing: "
            "a crash loses the run, and every effect it had still to make; compile it without "
            "a checkpointer (each run then gets a SqliteSaver of its own) to explore its windows",
            "explore_no_saver",
            **said_as(job["target"]),
        )
    if isinstance(graph.checkpointer, InMemorySaver):
        raise BadTarget(
            f"{named(job['target'])} is compiled with an InMemorySaver, which loses every save "
            "when the process dies: every crash point would lose the run; compile it (or "
            "decorate its @entrypoint) without a checkpointer (each run then gets a SqliteSaver "
            "of its own) to explore its windows",
            "explore_memory_saver",
            **said_as(job["target"]),
        )
    if isinstance(getattr(graph, "store", None), InMemoryStore):
        raise BadTarget(
            f"{named(job['target'])} is compiled with an InMemoryStore, which loses every item "
            "put in it when the process dies, and whose items the explorer cannot read: keep "
            "the nodes' lasting data in files of the run folder (a SQLite file) to explore it",
            "explore_memory_store",
            **said_as(job["target"]),
        )


def open_saver(job: dict, readers: object = None) -> Recorded:
    """The run's saver (`savers.open_saver`: for the reader's saver `readers`), with the
    tasks named and run in order."""
    name_tasks()
    run_in_order()
    return savers.open_saver(job, readers)


def run_first(job: dict, points: CrashPoints) -> bool:
    """Run the graph from its input to its end, with a crash point at every durable step;
    whether it reached its end."""
    watch = points.watch_commits(ignore=[CHECKPOINT_FILE])  # before the nodes' connections
    points.watch_files()
    reader = the_graph(job)
    refuse_what_keeps_nothing(reader.graph, job)
    points.reader_files |= reader.files
    saver = open_saver(job, reader.graph.checkpointer)
    note_replaced(reader.graph.checkpointer, saver, points.trace)
    saver.points = points
    saver.nodes = {n: f"{os.path.basename(f)}:{line}" for n, (f, line) in reader.nodes.items()}
    graph = with_saver(reader.graph, saver)
    graph.get_state(config_of(job))  # the saver makes its tables: set-up, as the files were
    points.arm()
    answer = answers(job, points.trace)
    finished = run_to_end(graph, reader.first_input, job, reader.context, answer, points)
    watch.observe()
    return finished


def recover(job: dict, trace: object) -> bool:
    """A fresh process resumes the thread: the answer to a saved interrupt, else `invoke(None)`
    (which also goes on past a breakpoint), then past every stop as the run did."""
    reader = the_graph(job)
    graph = with_saver(reader.graph, open_saver(job, reader.graph.checkpointer))
    answer = answers(job, trace)
    pending = graph.get_state(config_of(job)).interrupts
    first = answered(pending, answer) if pending else None
    return run_to_end(graph, first, job, reader.context, answer)
