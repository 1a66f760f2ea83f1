"""Ship an order, then notify its customer: two nodes. The service compiles `builder` with
its checkpointer; the explorer puts its own under `graph`."""

from typing import TypedDict

from langgraph.graph import END, START, StateGraph

from notifier.outbox import send_shipped_notice


class Order(TypedDict, total=False):
    order_id: str
    email: str
    shipped: bool
    notified: bool


def ship(order: Order) -> Order:
    return {"shipped": True}


def notify(order: Order) -> Order:
    send_shipped_notice(order["order_id"], order["email"])
    return {"notified": True}


builder = StateGraph(Order)
builder.add_node(ship)
builder.add_node(notify)
builder.add_edge(START, "ship")
builder.add_edge("ship", "notify")
builder.add_edge("notify", END)
graph = builder.compile()
INPUT = {"order_id": "order-42", "email": "ana@example.com"}  # the explorer's input
