"""An outside-shaped graph that keeps a binary file of its own: a node pickles its result to
`cache.pkl` (neither SQLite nor text: the explorer cannot judge what a crash leaves in it)."""

import pickle
from typing import TypedDict

from langgraph.graph import START, StateGraph


class State(TypedDict):
    query: str


def search(state: State) -> dict:
    with open("cache.pkl", "wb") as cache:
        pickle.dump({state["query"]: ["result 1", "result 2"]}, cache)
    return {}


graph = StateGraph(State).add_node(search).add_edge(START, "search")
INPUT = {"query": "flights to Basel"}
