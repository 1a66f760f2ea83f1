"""Shape: LangGraph's application structure (langgraph.json names a graph, or a function that
makes one: with no arguments, with the run's config, or as a context manager around what it
opens). Each factory builds the same graph: a charge with no key, then the receipt; a crash
after the charge's commit, before its writes are saved, charges twice."""

import sqlite3
from contextlib import asynccontextmanager, contextmanager
from typing import TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph


class State(TypedDict):
    order: str


def charge(state: State) -> dict:
    db = sqlite3.connect("shop.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS charges(order_id TEXT)")  # no key: twice is twice
    db.execute("INSERT INTO charges VALUES(?)", (state["order"],))
    return {}


def receipt(state: State) -> dict:
    return {}


def built():
    return StateGraph(State).add_sequence([charge, receipt]).add_edge(START, "charge").compile()


def make_graph(config: RunnableConfig):
    assert "thread_id" in config["configurable"]  # the run's config, as the server gives it
    return built()


def make_graph_untyped(config):
    return built()


@contextmanager
def graph_in_context():
    yield built()


async def make_graph_async():
    return built()


@asynccontextmanager
async def graph_in_async_context():
    yield built()


def charge_node(state):  # a node named by mistake: it takes a state, and is never called
    raise AssertionError("a node was called as a factory")


INPUT = {"order": "o-3"}
