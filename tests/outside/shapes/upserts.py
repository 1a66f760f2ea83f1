"""Shape: SQLite's UPSERT as tutorials write it (sqlite.org/lang_upsert.html): `keyed`
records a payment with INSERT OR IGNORE on the payment's stable id and sets the invoice
paid with ON CONFLICT DO UPDATE SET to a value: run twice, the same rows (green).
`counting` counts the invoice's reminders with ON CONFLICT DO UPDATE SET n = n + 1: run
twice, 2 where the run without a crash left 1."""

import sqlite3
from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    invoice: str


def connect() -> sqlite3.Connection:
    db = sqlite3.connect("billing.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS payments(id TEXT PRIMARY KEY, invoice TEXT)")
    db.execute("CREATE TABLE IF NOT EXISTS invoices(id TEXT PRIMARY KEY, status TEXT)")
    db.execute("CREATE TABLE IF NOT EXISTS reminders(invoice TEXT PRIMARY KEY, n INT)")
    return db


def pay(state: State) -> dict:
    db = connect()
    db.execute(
        "INSERT OR IGNORE INTO payments VALUES(?, ?)", (f"pay-{state['invoice']}", state["invoice"])
    )
    db.execute(
        "INSERT INTO invoices VALUES(?, 'paid') ON CONFLICT(id) DO UPDATE SET status = 'paid'",
        (state["invoice"],),
    )
    return {}


def remind(state: State) -> dict:
    connect().execute(
        "INSERT INTO reminders VALUES(?, 1) ON CONFLICT(invoice) DO UPDATE SET n = n + 1",
        (state["invoice"],),
    )
    return {}


def one_node(node: object) -> StateGraph:
    return StateGraph(State).add_node("node", node).add_edge(START, "node").add_edge("node", END)


keyed = one_node(pay)
counting = one_node(remind)
INPUT = {"invoice": "inv-8"}
