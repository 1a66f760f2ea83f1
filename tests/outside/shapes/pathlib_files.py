"""Shape: pathlib as tutorials use it for small state: `Path.write_text` to keep a counter
(read, add one, write back: run twice, 2 where the run without a crash left 1), and
`Path.open("a")` to append a log line. `status` only writes a fixed status with
`write_text` (run twice: the same file): green."""

from pathlib import Path
from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    user: str


def count_visit(state: State) -> dict:
    counter = Path("visits.txt")
    n = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(n + 1))
    return {}


def log_visit(state: State) -> dict:
    with Path("visits.log").open("a") as log:
        log.write(f"visit by {state['user']}\n")
    return {}


def mark_status(state: State) -> dict:
    Path("status.txt").write_text(f"{state['user']}: welcomed\n")
    return {}


counter = (
    StateGraph(State)
    .add_sequence([count_visit, log_visit])
    .add_edge(START, "count_visit")
    .add_edge("log_visit", END)
)
status = (
    StateGraph(State)
    .add_node(mark_status)
    .add_edge(START, "mark_status")
    .add_edge("mark_status", END)
)
INPUT = {"user": "ana"}
