"""An outside-shaped graph with a file outbox: a node appends the mail to `outbox.txt`
(no fsync: a killed process keeps what the kernel has) and the next records it as sent."""

import sqlite3
from typing import TypedDict

from langgraph.graph import START, StateGraph


class State(TypedDict):
    to: str


def send(state: State) -> dict:
    with open("outbox.txt", "a") as outbox:
        outbox.write(f"to={state['to']} subject=your order\n")
    return {}


def mark_sent(state: State) -> dict:
    db = sqlite3.connect("status.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS sent(address TEXT)")
    db.execute("INSERT INTO sent VALUES(?)", (state["to"],))
    return {}


graph = (
    StateGraph(State)
    .add_node(send)
    .add_node(mark_sent)
    .add_edge(START, "send")
    .add_edge("send", "mark_sent")
)
INPUT = {"to": "ada@example.com"}
