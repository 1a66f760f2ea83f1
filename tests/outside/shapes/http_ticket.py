"""Shape: the customer-support tutorial's tools call a company service over HTTP
(`requests.post`), its address and credentials in `config["configurable"]`. The service is
lesson 5's ticket service, in a process and a folder of its own. `fresh` sends a new
idempotency key each time (`uuid4`: a retry makes a second ticket); `stable` sends the
order's own key (the service returns the original ticket)."""

import uuid
from typing import TypedDict

import requests
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    order: str


def create_ticket(config: RunnableConfig, op_key: str) -> int:
    service = config["configurable"]
    answer = requests.post(
        f"{service['ticket_url']}/tickets",
        json={"tenant": "shop", "op_key": op_key, "title": "refund"},
        headers={"X-Labkit-Secret": service["ticket_secret"]},
        timeout=5,
    )
    answer.raise_for_status()
    return answer.json()["ticket"]


def open_ticket(state: State, config: RunnableConfig) -> dict:
    create_ticket(config, uuid.uuid4().hex)
    return {}


def open_ticket_once(state: State, config: RunnableConfig) -> dict:
    create_ticket(config, f"refund:{state['order']}")
    return {}


def one_node(node: object) -> StateGraph:
    return StateGraph(State).add_node("call", node).add_edge(START, "call").add_edge("call", END)


fresh = one_node(open_ticket)
stable = one_node(open_ticket_once)
INPUT = {"order": "o-10"}
