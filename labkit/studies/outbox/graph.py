"""Lesson 5, the outbox in a LangGraph graph: the node writes the message, it does not send it.

One node, `place_order`, commits the order and its outbox row in one transaction of
business.db, both keyed by the order's key (INSERT OR IGNORE on a UNIQUE key): LangGraph may run
the node again after a crash, and a replay then writes nothing new. The relay (relay.py, a
process of its own) delivers the one message later. Each run of the node appends a ledger line
saying what it wrote, so the parent can count the replays after any kill. Runs in the trial
server's forked workers (this module imports LangGraph; the graph is compiled once, there).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from labkit.bench.checkpoints import open_saver, with_saver
from labkit.bench.gate import Gate, report
from labkit.bench.ledger import Ledger
from labkit.bench.trace import Trace
from labkit.studies.outbox.stores import (
    BUSINESS_FILE,
    ITEM,
    ORDER_KEY,
    BusinessStore,
)

__all__ = ["NODE", "first_process", "resume_process"]

NODE = "place_order"
CONFIG = {"configurable": {"thread_id": "order-workflow-1"}}
FIRST_INPUT = {"order_key": ORDER_KEY, "item": ITEM}


class State(TypedDict, total=False):
    order_key: str
    item: str
    message_id: str


class OrderOnceStore(BusinessStore):
    """business.db for a node that may run again: the order goes in once per key."""

    def add_order_once(self, order_key: str, item: str) -> bool:
        """The order, unless one with this key is there already (the UNIQUE index on
        orders.order_key, made at set-up). True if it added the row."""
        cursor = self.db.execute(
            "INSERT OR IGNORE INTO orders(order_key, item) VALUES(?, ?)", (order_key, item)
        )
        if cursor.rowcount == 1:
            row = {"id": cursor.lastrowid, "order_key": order_key, "item": item}
            self.wrote("orders", "insert", row)
        return cursor.rowcount == 1


@dataclass(frozen=True)
class RunContext:
    """What the node needs from the process it runs in, given to `invoke(context=...)`."""

    business: OrderOnceStore
    ledger: Ledger
    stop: Callable[[str], None]  # a kill point: the worker's gate

    @classmethod
    def for_job(cls, job: dict) -> RunContext:
        trace = Trace(job["run_dir"], job["role"])
        trace.event("start")
        business = OrderOnceStore(job["run_dir"], BUSINESS_FILE, trace)
        return cls(business, Ledger(job["run_dir"]), Gate(trace, job))


def place_order(state: State, runtime: Runtime[RunContext]) -> dict:
    """Write the order and the message about it, together; send nothing."""
    hooks = runtime.context
    message_id = f"msg-{state['order_key']}"  # from the key: a replay makes the same id
    payload = json.dumps({"order_key": state["order_key"], "item": state["item"]})
    with hooks.business:
        wrote_order = hooks.business.add_order_once(state["order_key"], state["item"])
        wrote_message = hooks.business.add_message(message_id, payload)
    hooks.ledger.line(NODE, "ran", wrote_order=wrote_order, wrote_message=wrote_message)
    hooks.stop("node_committed")  # committed; LangGraph has saved nothing of this run yet
    return {"message_id": message_id}


def build() -> CompiledStateGraph:
    """START → place_order → END, compiled without a checkpointer."""
    builder = StateGraph(State, context_schema=RunContext)
    builder.add_node(NODE, place_order)
    builder.add_edge(START, NODE)
    builder.add_edge(NODE, END)
    return builder.compile()


SHAPE = build()  # compiled once, in the trial server


def first_process(job: dict) -> None:
    """Process 1: run the graph, saving each step before the next (durability sync); its
    parent SIGKILLs it at `node_committed`, inside the node, after the node's commit."""
    graph = with_saver(SHAPE, open_saver(job["run_dir"]))
    graph.invoke(FIRST_INPUT, CONFIG, durability="sync", context=RunContext.for_job(job))


def resume_process(job: dict) -> None:
    """A fresh process: see where the saved thread stands, then resume it with invoke(None),
    which runs the interrupted node again from its start."""
    graph = with_saver(SHAPE, open_saver(job["run_dir"]))
    found = list(graph.get_state(CONFIG).next)
    result = graph.invoke(None, CONFIG, durability="sync", context=RunContext.for_job(job))
    report(job, found_next=found, message_id=result.get("message_id"))
