"""Shape: LangGraph docs, "Use the graph API: combine control flow and state updates with
Command": a node returns `Command(goto=..., update=...)` instead of an edge. `triage` logs
the ticket (a row) and routes to `escalate`, which pages the on-call (a line in a file)."""

import sqlite3
from typing import Literal, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command


class State(TypedDict):
    ticket: str
    level: str


def triage(state: State) -> Command[Literal["escalate", "__end__"]]:
    db = sqlite3.connect("tickets.sqlite3", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS triaged(ticket TEXT, level TEXT)")
    db.execute("INSERT INTO triaged VALUES(?, 'high')", (state["ticket"],))
    return Command(goto="escalate", update={"level": "high"})


def escalate(state: State) -> Command[Literal["__end__"]]:
    with open("pages.log", "a") as pages:
        pages.write(f"page on-call: {state['ticket']} {state['level']}\n")
    return Command(goto=END)


graph = StateGraph(State).add_node(triage).add_node(escalate).add_edge(START, "triage")
INPUT = {"ticket": "T-9", "level": ""}
