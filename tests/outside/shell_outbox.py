"""A node that hands its side effect to another program: `sh` appends the mail to the
outbox. No call of this process writes the file, so no crash point can come after it."""

import subprocess
from typing import TypedDict

from langgraph.graph import START, StateGraph


class State(TypedDict):
    to: str


def send(state: State) -> dict:
    subprocess.run(["sh", "-c", f"echo to={state['to']} >> outbox.log"], check=True)
    return {}


graph = StateGraph(State).add_node(send).add_edge(START, "send")
INPUT = {"to": "ana@example.com"}
