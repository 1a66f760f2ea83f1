"""An outside-shaped graph in the docs' "@task in nodes" shape: a node calls two tasks, one
that charges a card (a row in payments.db) and one that sends a receipt (a line appended)."""

import sqlite3
from typing import TypedDict

from langgraph.func import task
from langgraph.graph import START, StateGraph


class State(TypedDict):
    order: str


@task
def charge_card(order: str) -> str:
    db = sqlite3.connect("payments.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS payments(order_id TEXT)")
    db.execute("INSERT INTO payments VALUES(?)", (order,))
    return "charged"


@task
def send_receipt(order: str) -> str:
    with open("receipts.txt", "a") as receipts:
        receipts.write(f"receipt for {order}\n")
    return "sent"


def checkout(state: State) -> dict:
    charge_card(state["order"]).result()
    send_receipt(state["order"]).result()
    return {}


graph = StateGraph(State).add_node(checkout).add_edge(START, "checkout")
INPUT = {"order": "order-9"}
