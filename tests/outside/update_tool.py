"""An outside-shaped graph (LangGraph docs' tool calling): a model node asks for a tool, a
ToolNode with fallbacks runs it, and the tool only UPDATEs a row (the customer-support
tutorial's shape)."""

import sqlite3
from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode


class State(TypedDict):
    messages: Annotated[list, add_messages]


@tool
def pay_invoice(amount: int) -> str:
    """Take an amount off the account's balance."""
    db = sqlite3.connect("bank.db", isolation_level=None)  # relative: the run's folder
    db.execute("CREATE TABLE IF NOT EXISTS account(id INTEGER PRIMARY KEY, balance INTEGER)")
    db.execute("INSERT OR IGNORE INTO account VALUES(1, 100)")
    db.execute("UPDATE account SET balance = balance - ? WHERE id = 1", (amount,))
    return "paid"


def model(state: State) -> dict:
    call = {"name": "pay_invoice", "args": {"amount": 10}, "id": "call-1"}
    return {"messages": [AIMessage("", tool_calls=[call])]}


def apologise(state: dict) -> dict:
    return {"messages": [AIMessage(f"the tool failed: {state['error']!r}")]}


tools = ToolNode([pay_invoice]).with_fallbacks([RunnableLambda(apologise)], exception_key="error")
graph = (
    StateGraph(State)
    .add_node("model", model)
    .add_node("tools", tools)
    .add_edge(START, "model")
    .add_edge("model", "tools")
)
INPUT = {"messages": [("user", "pay my invoice")]}
