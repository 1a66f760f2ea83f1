"""An outside-shaped graph whose tool keeps the app's rows in Postgres (psycopg, as graphs on
PostgresSaver do): `writes` inserts the order, `reads` only looks it up. The database and the
table come in the config, as a deployed graph's settings would."""

from typing import TypedDict

import psycopg
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph
from psycopg import sql


class Order(TypedDict):
    order: str


def table_of(config: RunnableConfig) -> tuple[str, sql.Identifier]:
    settings = config["configurable"]
    return settings["db"], sql.Identifier(settings["table"])


def record_order(state: Order, config: RunnableConfig) -> dict:
    db, table = table_of(config)
    with psycopg.connect(db, autocommit=True) as conn:
        conn.execute(sql.SQL("INSERT INTO {} VALUES (%s)").format(table), (state["order"],))
    return {}


def look_up_order(state: Order, config: RunnableConfig) -> dict:
    db, table = table_of(config)
    with psycopg.connect(db) as conn:
        conn.execute(
            sql.SQL("SELECT count(*) FROM {} WHERE id = %s").format(table), (state["order"],)
        )
    return {}


writes = StateGraph(Order).add_node(record_order).add_edge(START, "record_order")
reads = StateGraph(Order).add_node(look_up_order).add_edge(START, "look_up_order")
INPUT = {"order": "order-42"}
