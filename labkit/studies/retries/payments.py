"""Lesson 8, retries and timeouts: a payment node that fails after its charge, retried by
LangGraph in the same process (no crash at all), and what its idempotency key makes of that.

`charge` asks the payment service (bench/tickets.py: a known key gets the original charge back)
for a charge under the key the job names, writes a ledger line per attempt (its number from
`runtime.execution_info.node_attempt`, the key, the charge and whether it was new), and then
fails as the job says. `charge_async` is the same node as an async node under
`TimeoutPolicy(run_timeout=...)`: its reply is late, so the attempt times out after its charge.
Runs in the trial server's forked workers (this module imports LangGraph).
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import sqlite3
import uuid
from collections.abc import Callable
from typing import TypedDict

import httpx
import requests
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.errors import NodeTimeoutError
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import RetryPolicy, TimeoutPolicy

from labkit.bench.checkpoints import CHECKPOINT_FILE, open_saver
from labkit.bench.gate import report
from labkit.studies.retries.hooks import Hooks

__all__ = [
    "NODE",
    "REPLY_TIMEOUT",
    "CardDeclined",
    "build",
    "charge_orders",
    "default_retry_table",
    "order_ids",
    "payment_key",
    "sync_timeout_refusal",
]

NODE = "charge"
AMOUNT = "42.00 EUR"  # every order is for the same amount: a shared key goes unnoticed
REPLY_TIMEOUT = 0.2  # seconds: the async node's TimeoutPolicy(run_timeout=...)
LATE_REPLY = 2.0  # seconds a failing async attempt waits for its reply (it is cut off first)
BACKOFF = 0.01  # seconds before a retry: the lesson's retries need not wait half a second


class CardDeclined(Exception):  # noqa: N818 -- a payment service's word, as its clients see it
    """The card was declined: no retry will change that (a plain Exception, as most are)."""


class State(TypedDict, total=False):
    order: str
    receipt: int


KEY_MAKERS: dict[str, Callable[[str, int], str]] = {
    "uuid4": lambda order, attempt: uuid.uuid4().hex,
    "attempt": lambda order, attempt: f"{order}:{attempt}",
    "attempt_only": lambda order, attempt: str(attempt),
    "order": lambda order, attempt: order,
}


def payment_key(key: str, order: str, attempt: int) -> str:
    """The idempotency key the payment service sees, made the way `key` names."""
    return KEY_MAKERS[key](order, attempt)


def failure(name: str) -> Exception:
    """What goes wrong after the charge went through, as the client library raises it: in the
    operating system's words, or the json module's for a reply that is not JSON. The lab
    writes no sentence of its own into a run's results (issue 27): a view says it."""
    if name == "bad_reply":
        try:
            json.loads("<html>502 Bad Gateway</html>")
        except ValueError as error:  # a JSONDecodeError: a ValueError, as the spec says
            return ValueError(*error.args)
    code = {"reset": errno.ECONNRESET, "timeout": errno.ETIMEDOUT}[name]
    return {"reset": ConnectionResetError, "timeout": TimeoutError}[name](code, os.strerror(code))


def attempt_charge(state: State, runtime: Runtime[Hooks]) -> tuple[int, bool]:
    """One attempt's charge and its ledger line; a declined card raises before any charge."""
    hooks, spec = runtime.context, runtime.context.job["spec"]
    attempt = runtime.execution_info.node_attempt
    if spec["failure"] == "declined":
        hooks.ledger.line(NODE, "declined", order=state["order"], attempt=attempt)
        raise CardDeclined(state["order"])  # its name says why; the order is its data
    key = payment_key(spec["key"], state["order"], attempt)
    charge_id, new = hooks.charge(key, AMOUNT)
    hooks.ledger.line(
        NODE, "charged", order=state["order"], attempt=attempt, key=key, charge=charge_id, new=new
    )
    return charge_id, attempt <= spec["fail_times"]


def charge(state: State, runtime: Runtime[Hooks]) -> dict:
    """Charge, then fail the first `fail_times` attempts as the job's failure says."""
    charge_id, fails = attempt_charge(state, runtime)
    if fails:
        raise failure(runtime.context.job["spec"]["failure"])
    return {"receipt": charge_id}


async def charge_async(state: State, runtime: Runtime[Hooks]) -> dict:
    """Charge, then wait for the reply: a failing attempt's comes after REPLY_TIMEOUT."""
    charge_id, fails = attempt_charge(state, runtime)
    await asyncio.sleep(LATE_REPLY if fails else 0)
    return {"receipt": charge_id}


def retry_policy(policy: str, max_attempts: int) -> RetryPolicy | None:
    """The RetryPolicy a policy name stands for (spec.POLICIES), with a short backoff."""
    if policy == "none":
        return None
    base = {"max_attempts": max_attempts, "initial_interval": BACKOFF, "jitter": False}
    retry_on = {
        "default": {},
        "every": {"retry_on": Exception},
        "transient": {"retry_on": (ConnectionError, TimeoutError, NodeTimeoutError)},
    }[policy]
    return RetryPolicy(**base, **retry_on)


def build(spec: dict) -> CompiledStateGraph:
    """START → charge → END with the spec's policy (a sync node, or an async one with a
    TimeoutPolicy), compiled without a checkpointer (a worker attaches its own)."""
    builder = StateGraph(State, context_schema=Hooks)
    policy = retry_policy(spec["policy"], spec["max_attempts"])
    if spec["asynchronous"]:
        timeout = TimeoutPolicy(run_timeout=REPLY_TIMEOUT)
        builder.add_node(NODE, charge_async, retry_policy=policy, timeout=timeout)
    else:
        builder.add_node(NODE, charge, retry_policy=policy)
    builder.add_edge(START, NODE)
    builder.add_edge(NODE, END)
    return builder.compile()


def order_ids(orders: int) -> list[str]:
    return [f"order-{n}" for n in range(1, orders + 1)]


def outcome_of(error: BaseException | None, result: dict | None) -> dict:
    """What the caller of one order's run saw: its receipt, or the error it raised."""
    if error is not None:
        return {"receipt": None, "error": f"{type(error).__name__}: {error}"}
    return {"receipt": result.get("receipt"), "error": None}


def charge_orders(job: dict) -> None:
    """The worker: each order in its own thread, one after another; what each run ended with."""
    hooks = Hooks.for_job(job)
    if job["spec"]["asynchronous"]:
        seen = asyncio.run(charge_orders_async(job, hooks))
    else:
        graph = build(job["spec"]).copy({"checkpointer": open_saver(job["run_dir"])})
        seen = {}
        for order in order_ids(job["spec"]["orders"]):
            try:
                result = graph.invoke(*order_call(order), durability="sync", context=hooks)
                seen[order] = outcome_of(None, result)
            except Exception as error:  # the run's own end: what its caller would see
                seen[order] = outcome_of(error, None)
    report(job, orders=seen)


async def charge_orders_async(job: dict, hooks: Hooks) -> dict:
    """The same with `ainvoke`, on LangGraph's async SQLite checkpointer."""
    path = os.path.join(job["run_dir"], CHECKPOINT_FILE)
    seen = {}
    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        graph = build(job["spec"]).copy({"checkpointer": saver})
        for order in order_ids(job["spec"]["orders"]):
            try:
                result = await graph.ainvoke(*order_call(order), durability="sync", context=hooks)
                seen[order] = outcome_of(None, result)
            except Exception as error:
                seen[order] = outcome_of(error, None)
    return seen


def order_call(order: str) -> tuple[dict, dict]:
    """One order's input and config: each order is a thread of its own."""
    return {"order": order}, {"configurable": {"thread_id": order}}


def http_error(library: str, status: int) -> Exception:
    """An HTTP error with this status, as httpx or requests raises it for a reply."""
    if library == "httpx":
        request = httpx.Request("POST", "https://payments.example/charge")
        reply = httpx.Response(status, request=request)
        return httpx.HTTPStatusError(f"{status}", request=request, response=reply)
    reply = requests.Response()
    reply.status_code = status
    return requests.HTTPError(f"{status}", response=reply)


def default_retry_table() -> list[dict]:
    """LangGraph's own answer, asked now of the installed library: does `RetryPolicy()`
    retry each of these errors? (Runs in the trial server: nothing here starts a thread.)"""
    retries = RetryPolicy().retry_on
    errors = [
        ValueError("bad input"),
        KeyError("order"),
        RuntimeError("boom"),
        TimeoutError("read timed out"),
        OSError("disk"),
        ConnectionError("refused"),
        ConnectionResetError("reset by peer"),
        sqlite3.OperationalError("database is locked"),
        CardDeclined("declined"),
        NodeTimeoutError(NODE, REPLY_TIMEOUT, kind="run", run_timeout=REPLY_TIMEOUT),
        http_error("httpx", 503),
        http_error("httpx", 404),
        http_error("requests", 503),
        http_error("requests", 404),
        httpx.ConnectError("refused"),
        httpx.ReadTimeout("read timed out"),
        requests.ConnectionError("refused"),
        requests.Timeout("read timed out"),
    ]
    return [
        {
            "error": f"{type(e).__module__}.{type(e).__qualname__}".removeprefix("builtins."),
            "status": getattr(getattr(e, "response", None), "status_code", None),
            "retried": bool(retries(e)),
        }
        for e in errors
    ]


def sync_timeout_refusal() -> str | None:
    """What LangGraph says, now, to a TimeoutPolicy on a sync node: its error in one line, or
    None if it takes it. (Runs in the trial server: building a graph starts no thread.)"""
    builder = StateGraph(State)
    try:
        builder.add_node(NODE, charge, timeout=TimeoutPolicy(run_timeout=REPLY_TIMEOUT))
        builder.add_edge(START, NODE)
        builder.compile()
    except ValueError as error:
        return f"{type(error).__name__}: {error}"
    return None
