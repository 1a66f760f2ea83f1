"""An outside-shaped graph whose database is not named *.db (the tutorial's travel2.sqlite):
a booking node inserts a row into `travel.sqlite`."""

import sqlite3
from typing import TypedDict

from langgraph.graph import START, StateGraph


class State(TypedDict):
    flight: str


def book(state: State) -> dict:
    db = sqlite3.connect("travel.sqlite", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS bookings(flight TEXT)")
    db.execute("INSERT INTO bookings VALUES(?)", (state["flight"],))
    return {"flight": state["flight"]}


graph = StateGraph(State).add_node(book).add_edge(START, "book")
INPUT = {"flight": "LX 38"}
