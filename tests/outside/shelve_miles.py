"""An outside-shaped graph that keeps its state in `shelve`, Python's standard library: a node
books the flight in SQLite, the next credits its miles to the traveller's balance in the
shelf `miles` (a dbm file, neither SQLite nor text: no checker can read it). Run again after
a crash, the credit is made twice; only the shelf's bytes show it."""

import shelve
import sqlite3
from typing import TypedDict

from langgraph.graph import START, StateGraph


class State(TypedDict):
    traveller: str
    flight: str


def book(state: State) -> dict:
    db = sqlite3.connect("bookings.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS bookings(traveller TEXT, flight TEXT)")
    db.execute("INSERT INTO bookings VALUES(?, ?)", (state["traveller"], state["flight"]))
    db.close()
    return {}


def credit_miles(state: State) -> dict:
    with shelve.open("miles") as miles:
        miles[state["traveller"]] = miles.get(state["traveller"], 0) + 500
    return {}


graph = (
    StateGraph(State)
    .add_node(book)
    .add_node(credit_miles)
    .add_edge(START, "book")
    .add_edge("book", "credit_miles")
)
INPUT = {"traveller": "ada", "flight": "LX 38"}
