"""Shape: an `async def` node schedules the receipt with `asyncio.create_task` and returns
(fire and forget). Nothing awaits the task: a script's `asyncio.run` cancels it at the end,
a server's loop runs it, after the run."""

import asyncio
from typing import TypedDict

from langgraph.graph import END, START, StateGraph

sending = set()  # the tasks, kept from the garbage collector as asyncio's docs advise


class State(TypedDict):
    order: str


async def send_receipt(order: str) -> None:
    await asyncio.sleep(0.3)  # the mail server's answer
    with open("outbox.txt", "a") as out:
        out.write(f"receipt {order}\n")


async def mail(state: State) -> dict:
    sending.add(asyncio.create_task(send_receipt(state["order"])))
    return {}


async def bill(state: State) -> dict:
    return {}


graph = StateGraph(State).add_sequence([mail, bill]).add_edge(START, "mail").add_edge("bill", END)
INPUT = {"order": "o-2"}
