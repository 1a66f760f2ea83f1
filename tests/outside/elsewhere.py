"""An outside-shaped graph that writes outside its run folder: the orders database is at an
absolute path elsewhere on the machine (a test points ELSEWHERE at a folder of its own)."""

import os
import sqlite3
from typing import TypedDict

from langgraph.graph import START, StateGraph

ELSEWHERE = os.path.join(os.path.expanduser("~"), "orders")


class State(TypedDict):
    order: str


def place(state: State) -> dict:
    db = sqlite3.connect(os.path.join(ELSEWHERE, "orders.db"), isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS orders(id TEXT)")
    db.execute("INSERT INTO orders VALUES(?)", (state["order"],))
    return {}


graph = StateGraph(State).add_node(place).add_edge(START, "place")
INPUT = {"order": "order-7"}
