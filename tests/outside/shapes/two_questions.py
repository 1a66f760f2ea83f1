"""Shape: LangGraph docs, "Interrupts" (docs.langchain.com/oss/python/langgraph/interrupts):
several `interrupt()` calls in one node, each resumed with a dict, handled in order; the side
effect comes after the last answer, as the docs advise. `keyed` is the same node whose
insert is keyed by the order (INSERT OR IGNORE): it must come out green."""

import sqlite3
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


class State(TypedDict):
    order: str


def refund(state: State) -> dict:
    approval = interrupt({"question": "approve the refund?", "order": state["order"]})
    amount = interrupt({"question": "how much?", "order": state["order"]})
    if approval["action"] == "approve":
        db = sqlite3.connect("refunds.db", isolation_level=None)
        db.execute("CREATE TABLE IF NOT EXISTS refunds(order_id TEXT, amount INTEGER)")
        db.execute("INSERT INTO refunds VALUES(?, ?)", (state["order"], amount["amount"]))
    return {}


def refund_once(state: State) -> dict:
    approval = interrupt({"question": "approve the refund?", "order": state["order"]})
    amount = interrupt({"question": "how much?", "order": state["order"]})
    if approval["action"] == "approve":
        db = sqlite3.connect("refunds.db", isolation_level=None)
        db.execute("CREATE TABLE IF NOT EXISTS refunds(order_id TEXT PRIMARY KEY, amount INT)")
        db.execute("INSERT OR IGNORE INTO refunds VALUES(?, ?)", (state["order"], amount["amount"]))
    return {}


def reviewer(payload: dict) -> dict:
    """Answers each question by what it asks (resume_by)."""
    return {"action": "approve"} if payload["question"].startswith("approve") else {"amount": 7}


graph = StateGraph(State).add_node(refund).add_edge(START, "refund").add_edge("refund", END)
keyed = (
    StateGraph(State)
    .add_node("refund", refund_once)
    .add_edge(START, "refund")
    .add_edge("refund", END)
)
INPUT = {"order": "o-1"}
