"""An outside-shaped graph that logs what it does, as agent code does (`logging` to a file,
agent.log): a booking node whose row is keyed (`booked_once`) or not (`booked`)."""

import logging
import sqlite3
from typing import TypedDict

from langgraph.graph import START, StateGraph

log = logging.getLogger("booking")


class State(TypedDict):
    flight: str


def logged(key: str, insert: str) -> object:
    def book(state: State) -> dict:
        if not log.handlers:  # configured once per process, as an application's start does
            log.addHandler(logging.FileHandler("agent.log"))
            log.setLevel(logging.INFO)
        log.info("booking %s", state["flight"])
        db = sqlite3.connect("travel.sqlite", isolation_level=None)
        db.execute(f"CREATE TABLE IF NOT EXISTS bookings(flight TEXT{key})")
        db.execute(f"{insert} INTO bookings VALUES(?)", (state["flight"],))
        log.info("booked %s", state["flight"])
        return {"flight": state["flight"]}

    return StateGraph(State).add_node("book", book).add_edge(START, "book")


booked_once = logged(" PRIMARY KEY", "INSERT OR IGNORE")
booked = logged("", "INSERT")
INPUT = {"flight": "LX 38"}
