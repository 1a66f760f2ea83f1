"""An outside-shaped graph that keeps its state in `shelve`, Python's standard library: a node
books the flight in SQLite, the next credits its miles to the traveller's balance in the
shelf `miles`. Run again after a crash, the credit is made twice.

The shelf is dbm.dumb's, as `shelve.open("miles")` makes it where Python has neither gdbm nor
ndbm (a pyenv build without their libraries), here on every Python: miles.dat (the pickled
values), miles.dir (the index: where in .dat each value is) and miles.bak (the index before
its last rewrite). `graph` keeps the balance as an int, plain data the explorer reads;
`in_decimals` as a Decimal, which no checker reads (unpickling it would run its class's code).
`redeemed` deletes the balance of a shelf the run brings (`with_files`).
"""

import dbm.dumb
import shelve
import sqlite3
from decimal import Decimal
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


def open_miles() -> shelve.Shelf:
    """shelve.open("miles") on a Python with dbm.dumb only."""
    return shelve.Shelf(dbm.dumb.open("miles"))


def credit_miles(state: State) -> dict:
    with open_miles() as miles:
        miles[state["traveller"]] = miles.get(state["traveller"], 0) + 500
    return {}


def credit_decimal_miles(state: State) -> dict:
    with open_miles() as miles:
        miles[state["traveller"]] = miles.get(state["traveller"], Decimal(0)) + Decimal(500)
    return {}


def redeem_miles(state: State) -> dict:
    with open_miles() as miles:
        miles.pop(state["traveller"], None)  # a key deleted: dbm.dumb rewrites its index only
    return {}


def booked_then(credit: object) -> StateGraph:
    return (
        StateGraph(State)
        .add_node(book)
        .add_node("credit_miles", credit)
        .add_edge(START, "book")
        .add_edge("book", "credit_miles")
    )


graph = booked_then(credit_miles)
in_decimals = booked_then(credit_decimal_miles)
redeemed = StateGraph(State).add_node(redeem_miles).add_edge(START, "redeem_miles")
INPUT = {"traveller": "ada", "flight": "LX 38"}
