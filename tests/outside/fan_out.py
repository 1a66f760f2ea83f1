"""An outside-shaped graph in the docs' map-reduce shape: a node fans out with Send, one task
per subject, each writes a row; a last node picks the best (its own row)."""

import operator
import sqlite3
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send


class State(TypedDict):
    subjects: list[str]
    jokes: Annotated[list[str], operator.add]


def write_joke(item: dict) -> dict:
    db = sqlite3.connect("jokes.db", isolation_level=None, timeout=5)
    db.execute("CREATE TABLE IF NOT EXISTS jokes(subject TEXT)")
    db.execute("INSERT INTO jokes VALUES(?)", (item["subject"],))
    return {"jokes": [f"a joke about {item['subject']}"]}


def fan_out(state: State) -> list[Send]:
    return [Send("write_joke", {"subject": s}) for s in state["subjects"]]


def pick_best(state: State) -> dict:
    db = sqlite3.connect("jokes.db", isolation_level=None, timeout=5)
    db.execute("CREATE TABLE IF NOT EXISTS best(joke TEXT)")
    db.execute("INSERT INTO best VALUES(?)", (sorted(state["jokes"])[0],))
    return {}


graph = (
    StateGraph(State)
    .add_node(write_joke)
    .add_node(pick_best)
    .add_conditional_edges(START, fan_out, ["write_joke"])
    .add_edge("write_joke", "pick_best")
    .add_edge("pick_best", END)
)
INPUT = {"subjects": ["cats", "dogs", "owls"], "jokes": []}
