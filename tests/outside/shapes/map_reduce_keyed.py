"""Shape: LangGraph docs, "Map-reduce with the Send API": a conditional edge sends one task
per subject; each writes its row keyed by the subject (ON CONFLICT DO NOTHING), the reduce
step keys its summary too. Every write idempotent: the matrix must be green."""

import operator
import sqlite3
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send


class State(TypedDict):
    subjects: list[str]
    summaries: Annotated[list[str], operator.add]


def connect() -> sqlite3.Connection:
    db = sqlite3.connect("summaries.db", isolation_level=None, timeout=5)
    db.execute("CREATE TABLE IF NOT EXISTS items(subject TEXT PRIMARY KEY, text TEXT)")
    db.execute("CREATE TABLE IF NOT EXISTS digest(day TEXT PRIMARY KEY, n INTEGER)")
    return db


def summarise(item: dict) -> dict:
    text = f"summary of {item['subject']}"
    connect().execute(
        "INSERT INTO items VALUES(?, ?) ON CONFLICT(subject) DO NOTHING", (item["subject"], text)
    )
    return {"summaries": [text]}


def fan_out(state: State) -> list[Send]:
    return [Send("summarise", {"subject": s}) for s in state["subjects"]]


def digest(state: State) -> dict:
    connect().execute(
        "INSERT INTO digest VALUES('monday', ?) ON CONFLICT(day) DO UPDATE SET n = excluded.n",
        (len(state["summaries"]),),
    )
    return {}


graph = (
    StateGraph(State)
    .add_node(summarise)
    .add_node(digest)
    .add_conditional_edges(START, fan_out, ["summarise"])
    .add_edge("summarise", "digest")
    .add_edge("digest", END)
)
INPUT = {"subjects": ["cats", "dogs", "owls"], "summaries": []}
