"""An outside-shaped graph as LangGraph's persistence docs compile it: on an InMemorySaver,
which keeps nothing across a crash."""

from typing import TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph


class State(TypedDict):
    topic: str


def write_joke(state: State) -> dict:
    return {"topic": state["topic"] + " and cats"}


graph = (
    StateGraph(State)
    .add_node(write_joke)
    .add_edge(START, "write_joke")
    .compile(checkpointer=InMemorySaver())
)
INPUT = {"topic": "ice cream"}
