"""Shape: a node hands the receipt to a thread and returns at once (fire and forget, as web
apps do to keep a request fast): `threading.Thread(...).start()`, or a module's
`ThreadPoolExecutor`. The mail server is slow: the line is written after the graph ended,
as a Python program waits for its threads (and its pools' work) before it exits. A daemon
thread it does not wait for: in a server it sends the mail all the same. Beside them, a
library's daemon thread (a tracer's, here a sleep) that runs no code of the app's."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TypedDict

from langgraph.graph import END, START, StateGraph

mailer = ThreadPoolExecutor(max_workers=1)
threading.Thread(target=time.sleep, args=(60,), daemon=True).start()  # a tracer's thread


class State(TypedDict):
    order: str


def send_receipt(order: str) -> None:
    time.sleep(0.3)  # the mail server's answer
    with open("outbox.txt", "a") as out:
        out.write(f"receipt {order}\n")


def mail(state: State) -> dict:
    threading.Thread(target=send_receipt, args=(state["order"],)).start()
    return {}


def mail_pooled(state: State) -> dict:
    mailer.submit(send_receipt, state["order"])
    return {}


def mail_daemon(state: State) -> dict:
    threading.Thread(target=send_receipt, args=(state["order"],), daemon=True).start()
    return {}


def bill(state: State) -> dict:
    return {}


def graph_of(node) -> StateGraph:
    return (
        StateGraph(State)
        .add_sequence([node, bill])
        .add_edge(START, node.__name__)
        .add_edge("bill", END)
    )


thread = graph_of(mail)
pooled = graph_of(mail_pooled)
daemon = graph_of(mail_daemon)
INPUT = {"order": "o-2"}
