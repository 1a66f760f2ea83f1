"""Shape: LangGraph docs, "Use breakpoints" (static breakpoints): a graph compiled with
`interrupt_before=["send"]` and `interrupt_after=["draft"]`, resumed with `invoke(None)`.
`draft` saves the draft (a row), `send` appends the mail to an outbox file."""

import sqlite3
from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    to: str


def draft(state: State) -> dict:
    db = sqlite3.connect("drafts.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS drafts(to_address TEXT)")
    db.execute("INSERT INTO drafts VALUES(?)", (state["to"],))
    return {}


def review(state: State) -> dict:
    return {}


def send(state: State) -> dict:
    with open("outbox.txt", "a") as outbox:
        outbox.write(f"to={state['to']}\n")
    return {}


graph = (
    StateGraph(State)
    .add_sequence([draft, review, send])
    .add_edge(START, "draft")
    .add_edge("send", END)
    .compile(interrupt_before=["send"], interrupt_after=["draft"])
)
INPUT = {"to": "bo@example.com"}
