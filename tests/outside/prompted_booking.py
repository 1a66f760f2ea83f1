"""An outside-shaped graph that reads its prompt by a relative path, as an agent project keeps
its prompts beside its code (prompts/system.txt), then books a flight, keyed."""

import sqlite3
from typing import TypedDict

from langgraph.graph import START, StateGraph


class State(TypedDict):
    flight: str


def book(state: State) -> dict:
    with open("prompts/system.txt") as prompt:
        assert "book each flight once" in prompt.read()
    db = sqlite3.connect("travel.sqlite", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS bookings(flight TEXT PRIMARY KEY)")
    db.execute("INSERT OR IGNORE INTO bookings VALUES(?)", (state["flight"],))
    return {"flight": state["flight"]}


graph = StateGraph(State).add_node(book).add_edge(START, "book")
INPUT = {"flight": "LX 38"}
