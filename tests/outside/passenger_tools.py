"""The customer-support tutorial's shape: a tool reads `config["configurable"]["passenger_id"]`
(LangGraph passes the run's config to a node that asks for it) and books that passenger's
seat in bookings.db; without the id it raises, as the tutorial's tools do."""

import os
import sqlite3
from typing import TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime


class State(TypedDict):
    seat: str


def context(run_dir: str) -> dict:
    return {"bookings": os.path.join(run_dir, "bookings.db")}


def book_seat(state: State, config: RunnableConfig, runtime: Runtime) -> dict:
    passenger_id = config.get("configurable", {}).get("passenger_id")
    if not passenger_id:
        raise ValueError("No passenger ID configured.")
    with sqlite3.connect(runtime.context["bookings"]) as db:
        db.execute("CREATE TABLE IF NOT EXISTS bookings (passenger TEXT, seat TEXT)")
        db.execute("INSERT INTO bookings VALUES (?, ?)", (passenger_id, state["seat"]))
    return {}


graph = (
    StateGraph(State).add_node(book_seat).add_edge(START, "book_seat").add_edge("book_seat", END)
)
INPUT = {"seat": "12A"}
