"""LangGraph docs' async shape: `async def` nodes, run with `ainvoke`. A reviewer approves a
refund behind `interrupt()` (a dict answer); the refund node writes its row with `aiosqlite`
(a thread of its own does the commit), and a receipt node with plain `sqlite3`. A sync
`invoke` cannot run it ("No synchronous function provided")."""

import sqlite3
from typing import TypedDict

import aiosqlite
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


class State(TypedDict, total=False):
    decision: str


async def review(state: State) -> dict:
    answer = interrupt({"question": "refund 10?"})
    return {"decision": answer["action"]}


async def refund(state: State) -> dict:
    if state["decision"] == "approve":
        async with aiosqlite.connect("payments.db") as db:  # relative: the run's folder
            await db.execute("CREATE TABLE IF NOT EXISTS refunds (amount INTEGER)")
            await db.execute("INSERT INTO refunds VALUES (10)")
            await db.commit()
    return {}


async def receipt(state: State) -> dict:
    with sqlite3.connect("receipts.db") as db:
        db.execute("CREATE TABLE IF NOT EXISTS receipts (text TEXT)")
        db.execute("INSERT INTO receipts VALUES ('refunded 10')")
    return {}


graph = (
    StateGraph(State)
    .add_node(review)
    .add_node(refund)
    .add_node(receipt)
    .add_edge(START, "review")
    .add_edge("review", "refund")
    .add_edge("refund", "receipt")
    .add_edge("receipt", END)
    .compile()
)
