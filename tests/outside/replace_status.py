"""An outside-shaped graph whose write is idempotent but not its row's id: a node records an
order's status with INSERT OR REPLACE, which gives a re-run's row a new INTEGER PRIMARY KEY
(a generated id: the same status, another number)."""

import sqlite3
from typing import TypedDict

from langgraph.graph import START, StateGraph


class State(TypedDict):
    order: str


def record_status(state: State) -> dict:
    db = sqlite3.connect("orders.db", isolation_level=None)
    db.execute(
        "CREATE TABLE IF NOT EXISTS status"
        "(id INTEGER PRIMARY KEY, order_id TEXT UNIQUE, state TEXT)"
    )
    db.execute(
        "INSERT OR REPLACE INTO status(order_id, state) VALUES(?, 'paid')", (state["order"],)
    )
    return {}


def notify(state: State) -> dict:
    return {}


graph = (
    StateGraph(State)
    .add_node(record_status)
    .add_node(notify)
    .add_edge(START, "record_status")
    .add_edge("record_status", "notify")
)
INPUT = {"order": "order-5"}
