"""Shape: the "write a temp file, then os.replace" recipe for saving JSON atomically (Python
docs for os.replace; countless blog posts): a node reads orders.json, adds the order and
rewrites the whole file. `appending` adds to a list (run twice: the order twice); `keyed`
sets the order's entry in a dict (run twice: the same file). `keyed_in_a_temporary` and
`appending_in_a_temporary` write through `tempfile.NamedTemporaryFile(dir=".", delete=False)`,
as most recipes do: a crash before the rename leaves that file behind."""

import json
import os
import tempfile
from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    order: str


def load() -> object:
    try:
        with open("orders.json") as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def save(data: object) -> None:
    with open("orders.json.tmp", "w") as f:
        json.dump(data, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace("orders.json.tmp", "orders.json")


def save_in_a_temporary(data: object) -> None:
    with tempfile.NamedTemporaryFile("w", dir=".", delete=False) as f:
        json.dump(data, f)
    os.replace(f.name, "orders.json")


def add_order(state: State) -> dict:
    save([*(load() or []), state["order"]])
    return {}


def set_order(state: State) -> dict:
    save({**(load() or {}), state["order"]: "paid"})
    return {}


def one_node(node: object) -> StateGraph:
    return StateGraph(State).add_node("save", node).add_edge(START, "save").add_edge("save", END)


appending = one_node(add_order)
keyed = one_node(set_order)
appending_in_a_temporary = one_node(
    lambda state: save_in_a_temporary([*(load() or []), state["order"]]) or {}
)
keyed_in_a_temporary = one_node(
    lambda state: save_in_a_temporary({**(load() or {}), state["order"]: "paid"}) or {}
)
INPUT = {"order": "o-6"}
