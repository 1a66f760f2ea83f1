"""How a graph runs to its end, in a worker: `invoke` (or `ainvoke`, for a graph with an
`async def` node, as its reader runs it), then on past every stop: an interrupt answered
(`answers`), a static breakpoint resumed with None. The reader's config goes to every call,
around the explorer's own thread id. Imports LangGraph: only the trial server and its workers.
"""

from __future__ import annotations

import asyncio

from langgraph.graph.state import CompiledStateGraph

from labkit.studies.explorer.answers import Answers, resume_of
from labkit.studies.explorer.record import CrashPoints

__all__ = ["CONFIG", "config_of", "run_to_end"]

CONFIG = {"configurable": {"thread_id": "explored"}}
MAX_STOPS = 100  # a graph that stops more often than this is not going to its end


def config_of(job: dict) -> dict:
    """The reader's config (`configurable` values their tools read, such as a passenger's id;
    tags, a recursion limit) around the explorer's own thread id."""
    given = job.get("config") or {}
    configurable = {**given.get("configurable", {}), **CONFIG["configurable"]}
    return {**given, "configurable": configurable}


def has_async_nodes(graph: CompiledStateGraph) -> bool:
    """Whether a node is an `async def` function only: such a graph runs with `ainvoke`."""
    return any(async_only(node.bound) for name, node in graph.nodes.items() if name[:2] != "__")


def async_only(runnable: object) -> bool:
    """Whether a node's runnable has an async function and no sync one: a look that cannot
    fail the run (a `.with_fallbacks` runnable's attributes can raise, as in `code_of`)."""
    try:
        return (
            getattr(runnable, "func", None) is None and getattr(runnable, "afunc", None) is not None
        )
    except Exception:  # noqa: BLE001 - the reader's runnable's own error: run it as invoke does
        return False


def run_to_end(
    graph: CompiledStateGraph,
    first: object,
    job: dict,
    context: object,
    answer: Answers,
    points: CrashPoints | None = None,
) -> bool:
    """Invoke, go on past every stop (an interrupt answered, a static breakpoint such as
    `interrupt_before` resumed with None), and say whether the thread reached its end.
    A graph with async nodes is run with `ainvoke`, as its reader runs it."""
    if has_async_nodes(graph):
        return asyncio.run(arun_to_end(graph, first, job, context, answer, points))
    config, options = config_of(job), invoke_options(job, context)
    graph.invoke(first, config, **options)
    for _ in range(MAX_STOPS):
        state = graph.get_state(config)
        if not state.next:
            return True
        graph.invoke(resume_of(state, answer), config, **options)
    return False


async def arun_to_end(
    graph: CompiledStateGraph,
    first: object,
    job: dict,
    context: object,
    answer: Answers,
    points: CrashPoints | None = None,
) -> bool:
    """`run_to_end` for a graph with async nodes: `ainvoke` and `aget_state`. The tasks its
    nodes started and no one awaited, which `asyncio.run` cancels, are noted at the end."""
    if points is not None:  # a commit in another thread is placed where a node awaits it
        loop = asyncio.get_running_loop()
        points.suspended = lambda: suspended_frames(loop)
    config, options = config_of(job), invoke_options(job, context)
    try:
        await graph.ainvoke(first, config, **options)
        for _ in range(MAX_STOPS):
            state = await graph.aget_state(config)
            if not state.next:
                return True
            await graph.ainvoke(resume_of(state, answer), config, **options)
        return False
    finally:
        if points is not None:
            others = asyncio.all_tasks() - {asyncio.current_task()}
            points.note_left_running(map(awaiting_frames, others))


def suspended_frames(loop: asyncio.AbstractEventLoop) -> list:
    """The frames of the loop's waiting tasks, each task's innermost first."""
    return [frame for task in asyncio.all_tasks(loop) for frame in awaiting_frames(task)]


def awaiting_frames(task: asyncio.Task) -> list:
    """A task's frames, innermost first: down the chain of what its coroutine awaits (a
    task's own `get_stack` stops at its outermost one)."""
    chain, awaited = [], task.get_coro()
    while awaited is not None:
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
        if frame is not None:
            chain.append(frame)
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
    return chain[::-1]


def invoke_options(job: dict, context: object) -> dict:
    return {"durability": job["durability"], "context": context}
