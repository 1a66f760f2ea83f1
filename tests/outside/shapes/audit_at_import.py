"""Shape: an audit file opened once, when the module is imported, and written by a node
without a flush (Python flushes it when the program exits): the charge is keyed, the audit
line sits in the file's buffer until the end. A kill loses what a buffer holds."""

import sqlite3
from typing import TypedDict

from langgraph.graph import END, START, StateGraph

AUDIT = open("audit.txt", "a")  # noqa: SIM115 - the app's, open while it runs


class State(TypedDict):
    order: str


def charge(state: State) -> dict:
    db = sqlite3.connect("charges.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS charges(order_id TEXT PRIMARY KEY)")
    db.execute("INSERT OR IGNORE INTO charges VALUES(?)", (state["order"],))
    AUDIT.write(f"charged {state['order']}\n")
    return {}


def ship(state: State) -> dict:
    return {}


graph = (
    StateGraph(State).add_sequence([charge, ship]).add_edge(START, "charge").add_edge("ship", END)
)
INPUT = {"order": "o-1"}
