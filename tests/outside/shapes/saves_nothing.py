"""Shape: LangGraph docs, "Use subgraphs" (checkpointer=False: never checkpoint), here on the
graph itself: a charge, then the shipping row. Nothing is saved, so a crash after the charge
loses the run, and the shipping row with it: no saver may stand in for it."""

import sqlite3
from typing import TypedDict

from langgraph.graph import START, StateGraph


class State(TypedDict):
    order: str


def write(table: str, order: str) -> None:
    db = sqlite3.connect("orders.db", isolation_level=None)
    db.execute(f"CREATE TABLE IF NOT EXISTS {table}(order_id TEXT PRIMARY KEY)")
    db.execute(f"INSERT OR IGNORE INTO {table} VALUES(?)", (order,))


def charge(state: State) -> dict:
    write("charges", state["order"])
    return {}


def ship(state: State) -> dict:
    write("shipments", state["order"])
    return {}


graph = (
    StateGraph(State)
    .add_sequence([charge, ship])
    .add_edge(START, "charge")
    .compile(checkpointer=False)
)
INPUT = {"order": "o-9"}
