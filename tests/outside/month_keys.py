"""Outside-shaped graphs that save a monthly report once, keyed by its month, in a SQLite
file: `direct` reads the month with `time.strftime`, `via_library` through a library's call
(`email.utils.formatdate`, which reads `time.time`), `via_sqlite` with SQLite's
`strftime('%Y-%m', 'now')`, `no_clock` keys it by the run alone.
A crash after the report's commit and before its node's writes are saved re-runs the node at
the recovery: across a month boundary, the first two save a second report (a duplicate);
`no_clock` never does, whenever it comes back."""

import email.utils
import sqlite3
import time
from typing import TypedDict

from langgraph.graph import START, StateGraph


class Report(TypedDict):
    done: bool


def save_once(key: str) -> dict:
    with sqlite3.connect("reports.db") as db:
        db.execute("CREATE TABLE IF NOT EXISTS reports (key TEXT PRIMARY KEY)")
        db.execute("INSERT OR IGNORE INTO reports VALUES (?)", (key,))
    return {"done": True}


def direct(state: Report) -> dict:
    return save_once(f"report:{time.strftime('%Y-%m')}")


def via_library(state: Report) -> dict:
    return save_once("report:" + " ".join(email.utils.formatdate(localtime=True).split()[2:4]))


def via_sqlite(state: Report) -> dict:
    with sqlite3.connect(":memory:") as db:
        month = db.execute("SELECT strftime('%Y-%m', 'now')").fetchone()[0]
    return save_once(f"report:{month}")


def no_clock(state: Report) -> dict:
    return save_once("report:this-run")


def graph_of(node: object) -> object:
    return StateGraph(Report).add_node("report", node).add_edge(START, "report").compile()


direct_graph = graph_of(direct)
library_graph = graph_of(via_library)
sqlite_graph = graph_of(via_sqlite)
no_clock_graph = graph_of(no_clock)
INPUT = {"done": False}
