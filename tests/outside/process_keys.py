"""An outside-shaped graph whose node keys its charge by the process it runs in: its parent's
pid (`parent`) or its own (`own`), with INSERT OR IGNORE on the key. A real restart runs the
node again in another process under another parent, so the key changes and it charges twice."""

import os
import sqlite3
from typing import TypedDict

from langgraph.graph import START, StateGraph


class State(TypedDict):
    order: str


def charge(state: State, key: str) -> dict:
    db = sqlite3.connect("charges.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS charges(key TEXT PRIMARY KEY, ord TEXT)")
    db.execute("INSERT OR IGNORE INTO charges VALUES(?, ?)", (key, state["order"]))
    return {}


def by_parent(state: State) -> dict:
    return charge(state, f"charge:{os.getppid()}")


def by_own(state: State) -> dict:
    return charge(state, f"charge:{os.getpid()}")


parent = StateGraph(State).add_node(by_parent).add_edge(START, "by_parent")
own = StateGraph(State).add_node(by_own).add_edge(START, "by_own")
INPUT = {"order": "order-3"}
