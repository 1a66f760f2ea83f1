"""The relay: deliver every unsent outbox message to the consumer, then mark it sent.

Started by the outbox runner (entry `labkit.studies.outbox.relay:relay`), and again,
as a fresh process, to recover. Each delivery is a consumer process of its own, started and
reaped by the relay; only the consumer's exit tells the relay that the message was taken in.
The mark comes after that answer, in its own transaction: a relay killed between the two
delivers the message again next time (at least once, never at most once). A consumer that
dies before it answers leaves the outcome unknown to the relay, so the message stays unsent.
Worker-side: standard library only.
"""

from __future__ import annotations

from labkit.bench.gate import Gate, report
from labkit.bench.launcher import WorkerProcess, read_report
from labkit.bench.trace import Trace
from labkit.studies.outbox.stores import BUSINESS_FILE, BusinessStore

__all__ = ["CONSUMER_ENTRY", "relay"]

CONSUMER_ENTRY = "labkit.studies.outbox.consumer:consume"


def deliver(job: dict, number: int, message_id: str, payload: str) -> dict:
    """Hand the message to a fresh consumer process, wait for it, reap it; what it did."""
    planned = number == job["killed_delivery"]  # the plan: that one delivery's consumer only
    kill_at = job["consumer_kill_at"] if planned else None
    consumer = WorkerProcess(
        job["run_dir"],
        f"{job['role']}-consumer-{number}",
        CONSUMER_ENTRY,
        {
            "message_id": message_id,
            "payload": payload,
            "dedupe": job["dedupe"],
            **{k: job[k] for k in ("source", "name") if k in job},
        },
        pause_at=(kill_at,) if kill_at else (),
        timeout=job["timeout"],
    )
    with consumer:
        consumer.finish(kill_at=kill_at)  # SIGKILL there, from its parent: this relay
    return {
        **consumer.report().to_json(),
        "applied": read_report(job["run_dir"], consumer.role).get("applied"),
    }


def relay(job: dict) -> None:
    """One pass over the outbox: deliver, then mark, each unsent message in turn."""
    trace = Trace(job["run_dir"], job["role"])
    trace.event("start")
    gate = Gate(trace, job)
    business = BusinessStore(job["run_dir"], BUSINESS_FILE, trace)
    deliveries = []
    for number, (outbox_id, message_id, payload) in enumerate(business.unsent(), 1):
        gate("before_deliver")
        trace.event("deliver", message_id=message_id, number=number)
        deliveries.append(deliver(job, number, message_id, payload))
        report(job, deliveries=deliveries)  # now, not at the end: a kill may come first
        if deliveries[-1]["exit_code"] != 0:  # no answer: it may or may not have taken effect
            trace.event("unconfirmed", message_id=message_id, exit=deliveries[-1]["exit_code"])
            break
        trace.event("delivered", message_id=message_id, applied=deliveries[-1]["applied"])
        gate("after_deliver")
        with business:
            business.mark_sent(outbox_id)
        gate("after_mark")
    trace.event("exit", code=0)
