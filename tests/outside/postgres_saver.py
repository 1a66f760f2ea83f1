"""Outside-shaped graphs compiled with LangGraph's Postgres savers, as its docs compile theirs
(`builder.compile(checkpointer=...)`), on a pool of the deployed app's DATABASE_URL that is
opened only when the graph first saves. A `charge` node inserts the order into `orders.db`,
then `ship` runs: a crash between the charge's commit and its saved writes charges twice.
`graph` is compiled with a PostgresSaver, `async_graph` (async nodes) with an
AsyncPostgresSaver."""

import asyncio
import os
import sqlite3
from typing import TypedDict

from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import END, START, StateGraph
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

URL = os.environ.get("DATABASE_URL", "postgresql:///app")
OPTIONS = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


class Order(TypedDict):
    order: str


def charge(state: Order) -> dict:
    db = sqlite3.connect("orders.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS charges(id TEXT)")
    db.execute("INSERT INTO charges VALUES(?)", (state["order"],))
    db.close()
    return {}


def ship(state: Order) -> dict:
    return {}


async def acharge(state: Order) -> dict:
    return charge(state)


async def aship(state: Order) -> dict:
    return {}


def builder(first: object, second: object) -> StateGraph:
    return (
        StateGraph(Order)
        .add_node("charge", first)
        .add_node("ship", second)
        .add_edge(START, "charge")
        .add_edge("charge", "ship")
        .add_edge("ship", END)
    )


pool = ConnectionPool(URL, open=False, kwargs=OPTIONS)
graph = builder(charge, ship).compile(checkpointer=PostgresSaver(pool))


async def async_saver() -> AsyncPostgresSaver:
    """As an async app makes its saver: in its event loop (the saver asks for a running one)."""
    return AsyncPostgresSaver(AsyncConnectionPool(URL, open=False, kwargs=OPTIONS))


async_graph = builder(acharge, aship).compile(checkpointer=asyncio.run(async_saver()))


INPUT = {"order": "order-9"}
