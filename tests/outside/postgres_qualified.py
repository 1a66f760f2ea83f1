"""Outside-shaped graphs whose node names its table with a schema, as code written for one
database often does: `insert` adds the order to `public.orders`, `create` makes
`public.audit` for it; `reset` and `set_none` first go back to the session's own role (RESET
ROLE, SET ROLE NONE), as code that switches roles does, then insert into `public.orders`;
`set_lab_role` and `session_authorization` first try to become the lab's user (`postgres`);
`elsewhere` makes `public.audit` in another database of the server. Explored with a server,
all reach outside the run's own schema."""

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


def as_session_user(statement: str, order: str) -> None:
    with psycopg.connect(os.environ["DATABASE_URL"]) as conn:
        conn.execute(statement)
        conn.execute("INSERT INTO public.orders VALUES (%s)", (order,))


def reset(state: Order) -> dict:
    as_session_user("RESET ROLE", state["order"])
    return {}


def set_none(state: Order) -> dict:
    as_session_user("SET ROLE NONE", state["order"])
    return {}


def set_lab_role(state: Order) -> dict:
    as_session_user("SET ROLE postgres", state["order"])
    return {}


def session_authorization(state: Order) -> dict:
    as_session_user("SET SESSION AUTHORIZATION postgres", state["order"])
    return {}


def create_elsewhere(state: Order) -> dict:
    with psycopg.connect(os.environ["DATABASE_URL"], dbname="elsewhere") as conn:
        conn.execute("CREATE TABLE public.audit (id text)")
    return {}


insert_graph = StateGraph(Order).add_node(insert).add_edge(START, "insert")
create_graph = StateGraph(Order).add_node(create).add_edge(START, "create")
reset_graph = StateGraph(Order).add_node(reset).add_edge(START, "reset")
set_none_graph = StateGraph(Order).add_node(set_none).add_edge(START, "set_none")
set_lab_role_graph = StateGraph(Order).add_node(set_lab_role).add_edge(START, "set_lab_role")
authorization_graph = (
    StateGraph(Order).add_node(session_authorization).add_edge(START, "session_authorization")
)
elsewhere_graph = StateGraph(Order).add_node(create_elsewhere).add_edge(START, "create_elsewhere")
INPUT = {"order": "order-5"}
