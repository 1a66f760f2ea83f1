"""What lesson 8's nodes get from the worker they run in, given to `invoke(context=...)`.

The graphs are compiled once in the trial server, before any worker exists; each worker brings
its own ledger (what ran), the payment service (what was charged: a new connection per call,
as a new request to a remote service, so nodes in any of LangGraph's threads may call it) and
its gate (where its parent may stop or kill it). LangGraph saves none of it in a checkpoint.
Standard library and the bench only.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

from labkit.bench.gate import Gate
from labkit.bench.ledger import Ledger
from labkit.bench.tickets import Tickets
from labkit.bench.trace import Trace

__all__ = ["MERCHANT", "Hooks", "crash_here"]

MERCHANT = "shop"  # the payment service's tenant: every order of the lesson is the shop's


@dataclass(frozen=True)
class Hooks:
    """One worker's ledger and gate, and the way to its payment service, for the nodes."""

    job: dict
    ledger: Ledger
    gate: Gate

    @classmethod
    def for_job(cls, job: dict) -> Hooks:
        trace = Trace(job["run_dir"], job["role"])
        trace.event("start")
        return cls(job, Ledger(job["run_dir"]), Gate(trace, job))

    def charge(self, key: str, what: str) -> tuple[int, bool]:
        """A charge under `key` at the payment service: (its id, whether it is new). The
        service returns the original for a key it knows (bench/tickets.py)."""
        payments = Tickets(self.job["run_dir"])
        try:
            known = payments.find(MERCHANT, key)
            return payments.create(MERCHANT, key, what), known is None
        finally:
            payments.close()


def crash_here() -> None:
    """SIGKILL this process, now: no cleanup, no flush, nothing LangGraph could still save."""
    os.kill(os.getpid(), signal.SIGKILL)
