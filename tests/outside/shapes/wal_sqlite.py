"""Shape: a tutorial's app database, `app.sqlite`, opened with `PRAGMA journal_mode=WAL`
(as FastAPI/SQLite guides advise for concurrency): commits go to `app.sqlite-wal` first.
A node records the payment; a second node marks the order shipped (an UPDATE that sets a
value: run twice, the same row)."""

import sqlite3
from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    order: str


def connect() -> sqlite3.Connection:
    db = sqlite3.connect("app.sqlite", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE IF NOT EXISTS payments(order_id TEXT)")
    db.execute("CREATE TABLE IF NOT EXISTS orders(id TEXT PRIMARY KEY, shipped INT)")
    return db


def pay(state: State) -> dict:
    db = connect()
    db.execute("INSERT INTO payments VALUES(?)", (state["order"],))
    db.execute("INSERT OR IGNORE INTO orders VALUES(?, 0)", (state["order"],))
    return {}


def ship(state: State) -> dict:
    connect().execute("UPDATE orders SET shipped = 1 WHERE id = ?", (state["order"],))
    return {}


graph = (
    StateGraph(State)
    .add_node(pay)
    .add_node(ship)
    .add_edge(START, "pay")
    .add_edge("pay", "ship")
    .add_edge("ship", END)
)
INPUT = {"order": "o-4"}
