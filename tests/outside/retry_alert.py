"""An outside-shaped graph that writes outside its run folder only when it recovers: a node
that finds its own receipt from a run before (a retry) tells the on-call log, kept at an
absolute path elsewhere on the machine (a test points ALERTS at a file of its own). The run
without a crash never writes there; a recovery after the receipt does."""

import os
from typing import TypedDict

from langgraph.graph import START, StateGraph

ALERTS = os.path.join(os.path.expanduser("~"), "alerts.log")


class State(TypedDict):
    order: str


def charge(state: State) -> dict:
    if os.path.exists("receipts.txt"):  # a retry: someone should know
        with open(ALERTS, "a") as alerts:
            alerts.write(f"retried {state['order']}\n")
    with open("receipts.txt", "a") as receipts:
        receipts.write(f"charged {state['order']}\n")
    return {}


graph = StateGraph(State).add_node(charge).add_edge(START, "charge")
INPUT = {"order": "order-7"}
