"""A graph paused by a static breakpoint, `interrupt_before=["tools"]`, as LangGraph's
customer-support tutorial compiles its graph: the run stops before the tool node until it is
resumed with `invoke(None)`. The tool books a seat (a row in bookings.db)."""

import os
import sqlite3
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime


class State(TypedDict):
    seat: str


def context(run_dir: str) -> dict:
    return {"bookings": os.path.join(run_dir, "bookings.db")}


def assistant(state: State) -> dict:
    return {"seat": "12A"}


def tools(state: State, runtime: Runtime) -> dict:
    with sqlite3.connect(runtime.context["bookings"]) as db:
        db.execute("CREATE TABLE IF NOT EXISTS bookings (seat TEXT PRIMARY KEY)")
        db.execute("INSERT OR IGNORE INTO bookings VALUES (?)", (state["seat"],))
    return {}


def build() -> object:
    return (
        StateGraph(State)
        .add_node(assistant)
        .add_node(tools)
        .add_edge(START, "assistant")
        .add_edge("assistant", "tools")
        .add_edge("tools", END)
        .compile(interrupt_before=["tools"])
    )


INPUT = {"seat": ""}
