"""LangGraph docs' shape of validating human input: a node asks with `interrupt()` and asks
again, with the same question, until the answer is valid; then a second node asks whom to
tell, and sends (a row in outbox.db). The same payload must get a different answer the
second time, so no function of the payload can answer it: answers in order can."""

import os
import sqlite3
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import interrupt


class State(TypedDict):
    age: int
    to: str


def context(run_dir: str) -> dict:
    return {"outbox": os.path.join(run_dir, "outbox.db")}


def ask_age(state: State) -> dict:
    question = "What is your age?"
    while True:
        answer = interrupt(question)
        if isinstance(answer, int) and answer > 0:
            return {"age": answer}
        question = "What is your age?"  # the docs' loop asks the same again


def tell(state: State, runtime: Runtime) -> dict:
    to = interrupt({"question": "whom to tell?", "age": state["age"]})
    with sqlite3.connect(runtime.context["outbox"]) as db:
        db.execute("CREATE TABLE IF NOT EXISTS outbox (to_address TEXT, age INTEGER)")
        db.execute("INSERT INTO outbox VALUES (?, ?)", (to, state["age"]))
    return {"to": to}


graph = (
    StateGraph(State)
    .add_node(ask_age)
    .add_node(tell)
    .add_edge(START, "ask_age")
    .add_edge("ask_age", "tell")
    .add_edge("tell", END)
)
INPUT = {"age": 0, "to": ""}
