"""LangGraph docs' shape of a tool behind `interrupt()`: the reviewer answers with a dict
(`{"action": "approve"}`, or "reject"), and the tool sends (here: a row in outbox.db) only
when approved. A value of True, the explorer's old answer, fails inside the node."""

import os
import sqlite3
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import interrupt


class State(TypedDict):
    to: str
    sent: bool


def context(run_dir: str) -> dict:
    return {"outbox": os.path.join(run_dir, "outbox.db")}


def send_email(state: State, runtime: Runtime) -> dict:
    decision = interrupt({"tool": "send_email", "to": state["to"]})
    if decision["action"] != "approve":
        return {"sent": False}
    with sqlite3.connect(runtime.context["outbox"]) as db:
        db.execute("CREATE TABLE IF NOT EXISTS outbox (to_address TEXT)")
        db.execute("INSERT INTO outbox VALUES (?)", (state["to"],))
    return {"sent": True}


def only_colleagues(payload: dict) -> dict:
    """A reviewer who approves mail to the company's own addresses only."""
    return {"action": "approve" if payload["to"].endswith("@example.com") else "reject"}


graph = (
    StateGraph(State).add_node(send_email).add_edge(START, "send_email").add_edge("send_email", END)
)
INPUT = {"to": "ana@example.com", "sent": False}
