"""Lesson 8, the first checkpoint (issue #8764): a run killed before anything durable exists.

The caller accepts a run (a ledger line `accepted`, fsynced: the caller's own record) and
invokes START → first → END with the trial's durability mode. `first` SIGKILLs its own process
at its first line: the earliest moment user code runs. Whether the thread then exists at all
depends on what the mode had committed by then; a fresh process tries `invoke(None)`. This
module imports LangGraph; it runs in the trial server's forked workers.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Annotated, TypedDict

from langgraph.errors import EmptyInputError
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from labkit.bench.checkpoints import open_saver, with_saver
from labkit.bench.gate import report
from labkit.bench.ledger import Ledger
from labkit.studies.retries.hooks import crash_here

__all__ = ["SHAPE", "accept_and_crash", "recover"]

CONFIG = {"configurable": {"thread_id": "accepted-run"}}


class State(TypedDict):
    log: Annotated[list[str], operator.add]


@dataclass(frozen=True)
class Trial:
    """What the node needs from its worker: whether to crash, and the ledger."""

    crash: bool
    ledger: Ledger


def first(state: State, runtime: Runtime[Trial]) -> dict:
    if runtime.context.crash:
        crash_here()
    runtime.context.ledger.line("first", "ran")
    return {"log": ["first"]}


def build() -> CompiledStateGraph:
    builder = StateGraph(State, context_schema=Trial)
    builder.add_node("first", first)
    builder.add_edge(START, "first")
    builder.add_edge("first", END)
    return builder.compile()


SHAPE = build()  # compiled once, in the trial server


def accept_and_crash(job: dict) -> None:
    """The caller: note the run as accepted, invoke it; its first node kills the process."""
    ledger = Ledger(job["run_dir"])
    ledger.line("caller", "accepted")
    graph = with_saver(SHAPE, open_saver(job["run_dir"]))
    graph.invoke({"log": []}, CONFIG, durability=job["mode"], context=Trial(True, ledger))


def recover(job: dict) -> None:
    """A fresh process resumes the accepted run, if anything of it was saved."""
    ledger = Ledger(job["run_dir"])
    graph = with_saver(SHAPE, open_saver(job["run_dir"]))
    try:
        graph.invoke(None, CONFIG, durability=job["mode"], context=Trial(False, ledger))
    except EmptyInputError as error:
        report(job, resumed=False, error=f"{type(error).__name__}: {error}")
    else:
        report(job, resumed=True)
