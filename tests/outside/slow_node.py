"""A node that waits on a slow service (here: sleeps 2 s), as a tool calling an API does."""

import time
from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    done: bool


def call_api(state: State) -> dict:
    time.sleep(2)
    return {"done": True}


graph = StateGraph(State).add_node(call_api).add_edge(START, "call_api").add_edge("call_api", END)
INPUT = {"done": False}
