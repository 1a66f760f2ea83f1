"""Shape: LangGraph docs' async graphs (`async def` nodes, `ainvoke`): an aiosqlite node
inserts its rows with `executemany`, and another appends to a plain file from inside its
coroutine, as a quick outbox does."""

from typing import TypedDict

import aiosqlite
from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    items: list[str]


async def store(state: State) -> dict:
    async with aiosqlite.connect("orders.db") as db:
        await db.execute("CREATE TABLE IF NOT EXISTS lines(item TEXT)")
        await db.executemany("INSERT INTO lines VALUES(?)", [(i,) for i in state["items"]])
        await db.commit()
    return {}


async def notify(state: State) -> dict:
    with open("outbox.txt", "a") as outbox:
        outbox.write(f"{len(state['items'])} items ordered\n")
    return {}


graph = (
    StateGraph(State)
    .add_node(store)
    .add_node(notify)
    .add_edge(START, "store")
    .add_edge("store", "notify")
    .add_edge("notify", END)
)
INPUT = {"items": ["tea", "milk"]}
