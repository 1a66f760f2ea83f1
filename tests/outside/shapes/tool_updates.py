"""Shape: LangGraph docs, "Tool calling" / the customer-support tutorial: a model node asks
for tools, a `ToolNode` runs them, `tools_condition` routes back. The tools UPDATE rows:
`move_seat` sets a value (run twice, the same row: idempotent), `add_miles` adds to one
(run twice, 200 miles where the run without a crash left 100). `with_fallbacks` wraps the
ToolNode in `fallback` (the tutorial's `create_tool_node_with_fallback`)."""

import sqlite3
from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition


class State(TypedDict):
    messages: Annotated[list, add_messages]


def db() -> sqlite3.Connection:
    conn = sqlite3.connect("airline.db", isolation_level=None, timeout=5)
    conn.execute("CREATE TABLE IF NOT EXISTS tickets(id TEXT PRIMARY KEY, seat TEXT, miles INT)")
    conn.execute("INSERT OR IGNORE INTO tickets VALUES('t-1', '30C', 0)")
    return conn


@tool
def move_seat(seat: str) -> str:
    """Move the passenger to another seat."""
    db().execute("UPDATE tickets SET seat = ? WHERE id = 't-1'", (seat,))
    return f"moved to {seat}"


@tool
def add_miles(miles: int) -> str:
    """Credit the passenger's miles."""
    db().execute("UPDATE tickets SET miles = miles + ? WHERE id = 't-1'", (miles,))
    return f"{miles} miles added"


def assistant(state: State) -> dict:
    if isinstance(state["messages"][-1], ToolMessage):
        return {"messages": [AIMessage("done")]}
    calls = [
        {"name": "move_seat", "args": {"seat": "12A"}, "id": "call-1"},
        {"name": "add_miles", "args": {"miles": 100}, "id": "call-2"},
    ]
    return {"messages": [AIMessage("", tool_calls=calls)]}


def handle_tool_error(state: dict) -> dict:
    return {"messages": [AIMessage(f"tool error: {state['error']!r}")]}


def build(tools: object) -> StateGraph:
    return (
        StateGraph(State)
        .add_node("assistant", assistant)
        .add_node("tools", tools)
        .add_edge(START, "assistant")
        .add_conditional_edges("assistant", tools_condition)
        .add_edge("tools", "assistant")
    )


def one_call_each(state: State) -> dict:
    """The assistant of `sequential`: one tool call per message, seat first, then miles."""
    done = sum(isinstance(m, ToolMessage) for m in state["messages"])
    calls = [
        {"name": "move_seat", "args": {"seat": "12A"}, "id": "call-1"},
        {"name": "add_miles", "args": {"miles": 100}, "id": "call-2"},
    ]
    if done == len(calls):
        return {"messages": [AIMessage("done")]}
    return {"messages": [AIMessage("", tool_calls=[calls[done]])]}


TOOLS = [move_seat, add_miles]
graph = build(ToolNode(TOOLS))
fallback = build(
    ToolNode(TOOLS).with_fallbacks([RunnableLambda(handle_tool_error)], exception_key="error")
)
sequential = (
    StateGraph(State)
    .add_node("assistant", one_call_each)
    .add_node("tools", ToolNode(TOOLS))
    .add_edge(START, "assistant")
    .add_conditional_edges("assistant", tools_condition)
    .add_edge("tools", "assistant")
)
INPUT = {"messages": [("user", "move me to 12A and credit my miles")]}
