"""An outside-shaped callable: a driver that runs a graph whose node calls into a module of
the reader's beside it (store.py), where the commit is."""

import importlib.util
import os
from typing import TypedDict

from langgraph.graph import START, StateGraph

_spec = importlib.util.spec_from_file_location(
    "store", os.path.join(os.path.dirname(os.path.abspath(__file__)), "store.py")
)
store = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(store)


class State(TypedDict):
    order: str


def ship(state: State) -> dict:
    store.record_shipment(state["order"])
    return {}


shape = StateGraph(State).add_node(ship).add_edge(START, "ship")


def run(checkpointer: object, resume: bool) -> None:
    graph = shape.compile(checkpointer=checkpointer)
    config = {"configurable": {"thread_id": "order-3"}}
    graph.invoke(None if resume else {"order": "order-3"}, config, durability="sync")
