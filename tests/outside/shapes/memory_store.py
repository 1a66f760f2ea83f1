"""Shape: LangGraph docs, "Memory" / "Add long-term memory" (docs.langchain.com/oss/python/
langgraph/add-memory): `builder.compile(store=InMemoryStore())`, a node that saves what it
learned with `store.put(...)`. The store lives in the process: a crash loses every memory
saved, and recovery does not save it again once the node's writes are saved."""

import uuid
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore


class State(TypedDict):
    user: str


def remember(state: State, *, store: BaseStore) -> dict:
    store.put(("memories", state["user"]), str(uuid.uuid4()), {"likes": "window seats"})
    return {}


def answer(state: State, *, store: BaseStore) -> dict:
    return {}


graph = (
    StateGraph(State)
    .add_node(remember)
    .add_node(answer)
    .add_edge(START, "remember")
    .add_edge("remember", "answer")
    .add_edge("answer", END)
    .compile(store=InMemoryStore())
)
INPUT = {"user": "ana"}
