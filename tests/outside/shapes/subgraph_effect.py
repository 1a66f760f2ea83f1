"""Shape: LangGraph docs, "Use subgraphs" (shared state keys): a compiled subgraph added as
a node of the parent. The subgraph's own node books the hotel (a row); the parent's node
after it confirms (a line in a file). The parent's checkpointer saves the subgraph's steps.
`called` is the docs' other way, "invoke a graph from a node": a node calls
`hotel.invoke(...)` itself (the subgraph is checkpointed the same, under the node's task)."""

import sqlite3
from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    trip: str


def book_hotel(state: State) -> dict:
    db = sqlite3.connect("hotels.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS bookings(trip TEXT)")
    db.execute("INSERT INTO bookings VALUES(?)", (state["trip"],))
    return {}


def check_in_time(state: State) -> dict:
    return {}


hotel = (
    StateGraph(State)
    .add_sequence([book_hotel, check_in_time])
    .add_edge(START, "book_hotel")
    .compile()
)


def confirm(state: State) -> dict:
    with open("confirmations.txt", "a") as out:
        out.write(f"confirmed {state['trip']}\n")
    return {}


graph = (
    StateGraph(State)
    .add_node("hotel", hotel)
    .add_node(confirm)
    .add_edge(START, "hotel")
    .add_edge("hotel", "confirm")
    .add_edge("confirm", END)
)
INPUT = {"trip": "basel-0412"}


def book_trip(state: State) -> dict:
    hotel.invoke({"trip": state["trip"]})
    return {}


called = (
    StateGraph(State)
    .add_node(book_trip)
    .add_node(confirm)
    .add_edge(START, "book_trip")
    .add_edge("book_trip", "confirm")
    .add_edge("confirm", END)
)
