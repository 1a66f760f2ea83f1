"""Shape: LangGraph docs, "Functional API" (docs.langchain.com/oss/python/langgraph/
functional-api): an `@entrypoint` that calls `@task`s, each with a side effect; here the
entrypoint's own body also appends an audit line before its tasks (the docs warn that the
entrypoint's body runs again on resume). Decorated without a checkpointer: the explorer
gives it its own."""

import sqlite3

from langgraph.func import entrypoint, task


@task
def charge(order: str) -> str:
    db = sqlite3.connect("payments.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS payments(order_id TEXT)")
    db.execute("INSERT INTO payments VALUES(?)", (order,))
    return "charged"


@task
def email(order: str) -> str:
    with open("outbox.txt", "a") as outbox:
        outbox.write(f"receipt for {order}\n")
    return "sent"


@entrypoint()
def workflow(order: str) -> dict:
    with open("audit.txt", "a") as audit:
        audit.write(f"checkout {order}\n")
    charged = charge(order).result()
    sent = email(order).result()
    return {"charged": charged, "sent": sent}


INPUT = "o-2"
