"""Shape: LangGraph docs, "Functional API" quickstart, as written there:
`@entrypoint(checkpointer=InMemorySaver())`. An in-memory checkpointer keeps nothing across
a crash: the explorer must not give it a saver of its own and call it green."""

import sqlite3

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import entrypoint, task


@task
def charge(order: str) -> str:
    db = sqlite3.connect("payments.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS payments(order_id TEXT)")
    db.execute("INSERT INTO payments VALUES(?)", (order,))
    return "charged"


@entrypoint(checkpointer=InMemorySaver())
def workflow(order: str) -> str:
    return charge(order).result()


INPUT = "o-3"
