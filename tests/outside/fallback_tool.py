"""The customer-support tutorial's shape: an assistant asks for a tool call, and the tools
run in a `ToolNode(...).with_fallbacks(...)` (an error becomes a message, not a crash)."""

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode


@tool
def book_seat(seat: str) -> str:
    """Book the passenger's seat."""
    return f"seat {seat} booked"


def assistant(state: MessagesState) -> dict:
    call = {"name": "book_seat", "args": {"seat": "12A"}, "id": "call-1"}
    return {"messages": [AIMessage(content="", tool_calls=[call])]}


def handle_tool_error(state: MessagesState) -> dict:
    return {"messages": []}


tools = ToolNode([book_seat]).with_fallbacks(
    [RunnableLambda(handle_tool_error)], exception_key="error"
)
graph = (
    StateGraph(MessagesState)
    .add_node(assistant)
    .add_node("tools", tools)
    .add_edge(START, "assistant")
    .add_edge("assistant", "tools")
    .add_edge("tools", END)
)
INPUT = {"messages": []}
