"""Outside-shaped graphs whose node keeps orders in Postgres, found by DATABASE_URL as
deployed apps find theirs; the node makes its table (CREATE TABLE IF NOT EXISTS), as set-up
code does. `plain` inserts in one transaction (`with psycopg.connect(...)` commits at its
end); `keyed` inserts with the order's id as the key (ON CONFLICT DO NOTHING) inside a
`transaction()` block; `autocommit` inserts, then marks the order paid, in autocommit mode:
two commits."""

import os
from typing import TypedDict

import psycopg
from langgraph.graph import START, StateGraph

TABLE = "CREATE TABLE IF NOT EXISTS orders (id text {key}, paid bool, n serial, at timestamptz)"


class Order(TypedDict):
    order: str


def place(state: Order) -> dict:
    with psycopg.connect(os.environ["DATABASE_URL"]) as conn:
        conn.execute(TABLE.format(key=""))
        conn.execute("INSERT INTO orders VALUES (%s, false, DEFAULT, now())", (state["order"],))
    return {}


def place_once(state: Order) -> dict:
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn, conn.transaction():
        conn.execute(TABLE.format(key="PRIMARY KEY"))
        conn.execute(
            "INSERT INTO orders VALUES (%s, false, DEFAULT, now()) ON CONFLICT DO NOTHING",
            (state["order"],),
        )
    return {}


def place_and_pay(state: Order) -> dict:
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        conn.execute(TABLE.format(key="PRIMARY KEY"))
        conn.execute("INSERT INTO orders VALUES (%s, false, DEFAULT, now())", (state["order"],))
        conn.execute("UPDATE orders SET paid = true WHERE id = %s", (state["order"],))
    return {}


plain = StateGraph(Order).add_node(place).add_edge(START, "place")
keyed = StateGraph(Order).add_node(place_once).add_edge(START, "place_once")
autocommit = StateGraph(Order).add_node(place_and_pay).add_edge(START, "place_and_pay")
INPUT = {"order": "order-42"}
