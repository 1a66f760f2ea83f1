"""The producer: one business operation that commits its order and its outbox row together.

Started by the outbox runner (entry `labkit.studies.outbox.producer:produce`). The
message id is made here, once, and stored with the message: every later delivery of it, by any
relay process, carries the same id, so a consumer can recognise a redelivery by it (not by its
payload: two orders for the same thing may carry the same one, `one_payload`). Worker-side:
standard library only.
"""

from __future__ import annotations

import json
import uuid

from labkit.bench.gate import Gate
from labkit.bench.trace import Trace
from labkit.studies.outbox.stores import (
    BUSINESS_FILE,
    ITEM,
    ORDER_KEY,
    BusinessStore,
)

__all__ = ["produce"]


def produce(job: dict) -> None:
    """Commit the order(s) and the message about each in one transaction on business.db."""
    trace = Trace(job["run_dir"], job["role"])
    trace.event("start")
    gate = Gate(trace, job)
    business = BusinessStore(job["run_dir"], BUSINESS_FILE, trace)
    with business:
        for number in range(1, job["orders"] + 1):
            order_key = ORDER_KEY if number == 1 else f"{ORDER_KEY}.{number}"
            business.add_order(order_key, ITEM)
            about = {"item": ITEM} if job["one_payload"] else {"order_key": order_key, "item": ITEM}
            payload = json.dumps(about)
            business.add_message(f"msg-{uuid.uuid4().hex[:8]}", payload)
        gate("in_transaction")
    gate("committed")
    trace.event("exit", code=0)
