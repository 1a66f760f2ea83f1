"""Shape: the sqlite3 docs' `executemany` on a connection in autocommit mode
(`isolation_level=None`): each row inserted is a transaction of its own. `plain` inserts
the order's lines; `keyed` inserts them with INSERT OR IGNORE on (order, line): green."""

import sqlite3
from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    order: str


LINES = [(1, "tea"), (2, "milk"), (3, "bread")]


def insert_lines(state: State) -> dict:
    db = sqlite3.connect("lines.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS lines(order_id TEXT, n INT, item TEXT)")
    db.executemany("INSERT INTO lines VALUES(?, ?, ?)", [(state["order"], *x) for x in LINES])
    return {}


def insert_lines_once(state: State) -> dict:
    db = sqlite3.connect("lines.db", isolation_level=None)
    db.execute(
        "CREATE TABLE IF NOT EXISTS lines"
        "(order_id TEXT, n INT, item TEXT, PRIMARY KEY(order_id, n))"
    )
    db.executemany(
        "INSERT OR IGNORE INTO lines VALUES(?, ?, ?)", [(state["order"], *x) for x in LINES]
    )
    return {}


def one_node(node: object) -> StateGraph:
    return StateGraph(State).add_node("lines", node).add_edge(START, "lines").add_edge("lines", END)


plain = one_node(insert_lines)
keyed = one_node(insert_lines_once)
INPUT = {"order": "o-5"}
