"""An outside-shaped graph with a file outbox: a node appends the mail to `outbox.txt`
(no fsync: a killed process keeps what the kernel has) and the next records it as sent.
`by_descriptor` writes the same outbox below Python's file objects, as a logging library or a
C extension does: `os.open` for appending, `os.write`, `os.close`."""

import os
import sqlite3
from typing import TypedDict

from langgraph.graph import START, StateGraph


class State(TypedDict):
    to: str


def send(state: State) -> dict:
    with open("outbox.txt", "a") as outbox:
        outbox.write(f"to={state['to']} subject=your order\n")
    return {}


def send_by_descriptor(state: State) -> dict:
    fd = os.open("outbox.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, f"to={state['to']}\n".encode())
    finally:
        os.close(fd)
    return {}


def mark_sent(state: State) -> dict:
    db = sqlite3.connect("status.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS sent(address TEXT)")
    db.execute("INSERT INTO sent VALUES(?)", (state["to"],))
    return {}


def sending_with(send: object) -> StateGraph:
    return (
        StateGraph(State)
        .add_node("send", send)
        .add_node(mark_sent)
        .add_edge(START, "send")
        .add_edge("send", "mark_sent")
    )


graph = sending_with(send)
by_descriptor = sending_with(send_by_descriptor)
INPUT = {"to": "ada@example.com"}
