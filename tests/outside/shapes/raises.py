"""Shape: graphs whose run fails by itself, as a new user's often does: `in_subgraph`, a
node of a subgraph raises KeyError after its side effect (a typo in a state key); `in_task`,
an `@entrypoint`'s `@task` raises; `in_async`, an `async def` node raises (the graph run with
`ainvoke`). The exploration must fail, not come out green."""

import sqlite3
from typing import TypedDict

from langgraph.func import entrypoint, task
from langgraph.graph import START, StateGraph


class State(TypedDict):
    order: str


def write_and_fail(state: State) -> dict:
    db = sqlite3.connect("orders.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS orders(id TEXT)")
    db.execute("INSERT INTO orders VALUES(?)", (state["order"],))
    return {"order": state["ordr"]}  # the typo


inner = StateGraph(State).add_node(write_and_fail).add_edge(START, "write_and_fail").compile()
in_subgraph = StateGraph(State).add_node("inner", inner).add_edge(START, "inner")


@task
def lookup(order: str) -> str:
    raise LookupError(f"no order {order}")


@entrypoint()
def in_task(order: str) -> str:
    return lookup(order).result()


INPUT = {"order": "o-7"}


async def write_and_fail_async(state: State) -> dict:
    return write_and_fail(state)


in_async = StateGraph(State).add_node(write_and_fail_async).add_edge(START, "write_and_fail_async")
