"""Outside-shaped graphs whose node names its table with a schema, as code written for one
database often does: `insert` adds the order to `public.orders`, `create` makes
`public.audit` for it. Explored with a server, both reach outside the run's own schema."""

import os
from typing import TypedDict

import psycopg
from langgraph.graph import START, StateGraph


class Order(TypedDict):
    order: str


def insert(state: Order) -> dict:
    with psycopg.connect(os.environ["DATABASE_URL"]) as conn:
        conn.execute("INSERT INTO public.orders VALUES (%s)", (state["order"],))
    return {}


def create(state: Order) -> dict:
    with psycopg.connect(os.environ["DATABASE_URL"]) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS public.audit (id text)")
    return {}


insert_graph = StateGraph(Order).add_node(insert).add_edge(START, "insert")
create_graph = StateGraph(Order).add_node(create).add_edge(START, "create")
INPUT = {"order": "order-5"}
