"""The caller worker: one workflow step that asks the ticket service for a ticket over HTTP.

Started by the lab as a fresh `python -I` worker (entry
`labkit.studies.unknown_outcome.caller:run_caller`); standard library and labkit's
worker-side modules only. Before it calls, it commits an intent row (key, status "unknown")
to its own checkpoint, `caller.db`: the recovery point. Every call goes into
`history.jsonl` as Jepsen records it: an "invoke", then "ok", "fail" or "info" (the outcome
is unknown: it may or may not have happened). The first process ("caller") calls once; a
fresh process ("recovery") finds the intent still "unknown" and does what its strategy says.
Every request carries the service's secret, read from the file the service left it in: the
service answers no one else.
"""

from __future__ import annotations

import http.client
import json
import os
import sqlite3
import sys
import uuid
from collections.abc import Callable
from urllib.parse import urlencode

from labkit.bench.gate import Gate
from labkit.bench.own_names import LABS_OWN
from labkit.bench.trace import MONOTONIC_NS, Trace, append_json_line

__all__ = [
    "CALLER_FILE",
    "CALLER_POINTS",
    "FAULT_HEADER",
    "HISTORY_FILE",
    "LEARNER_FILE",
    "RECOVERIES",
    "Refused",
    "SECRET_FILE",
    "SECRET_HEADER",
    "TicketService",
    "Unknown",
    "run_caller",
]

CALLER_FILE = "caller.db"
HISTORY_FILE = "history.jsonl"
CALLER_POINTS = ("intent_saved", "sent", "answered")  # the first caller's kill points, in order
LEARNER_FILE = "<your recovery>"  # a reader's recovery's file name in a traceback
# The service's side of the wire, named here, in the module every caller loads anyway
FAULT_HEADER = "X-Labkit-Fault"
SECRET_HEADER = "X-Labkit-Secret"
SECRET_FILE = LABS_OWN + "secret"  # in the service's folder, mode 0600: no effect of the run
SCHEMA = """CREATE TABLE IF NOT EXISTS intent(
    op_key TEXT PRIMARY KEY, title TEXT NOT NULL, status TEXT NOT NULL, ticket INTEGER)"""


class Unknown(Exception):
    """No answer came (a timeout, a connection cut): the call may or may not have happened."""


class Refused(Exception):
    """The service said no (the key holds another payload): the call did not happen."""


class TicketService:
    """The ticket service as this caller reaches it: each call is one Jepsen op in the history."""

    def __init__(self, job: dict, gate: Gate, timeout: float, fault: str = "none") -> None:
        self.port, self.tenant, self.timeout = job["port"], job["tenant"], timeout
        self.role, self.gate, self.fault = job["role"], gate, fault
        # the service's folder: the job names it, else the service serves this run's own folder
        with open(os.path.join(job.get("service_dir", os.curdir), SECRET_FILE)) as secret:
            self._secret = secret.read()
        self._history = os.open(HISTORY_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def create(self, op_key: str, title: str) -> int:
        """The ticket for this key: new, or the original if the service has it already."""
        body = json.dumps({"tenant": self.tenant, "op_key": op_key, "title": title})
        headers = {"Content-Type": "application/json", FAULT_HEADER: self.fault}
        self.fault = "none"  # a fault hits the first call only
        return self._call("create", op_key, "POST", "/tickets", body, headers)

    def lookup(self, op_key: str) -> int | None:
        """The ticket this key got, or None if the service holds none (yet)."""
        query = urlencode({"tenant": self.tenant, "op_key": op_key})
        return self._call("read", op_key, "GET", f"/tickets?{query}", None, {})

    def _call(self, f: str, op_key: str, method: str, path: str, body: str | None, headers: dict):
        self.note("invoke", f, op_key)
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        try:
            connection.request(method, path, body, {**headers, SECRET_HEADER: self._secret})
            self.gate("sent")
            response = connection.getresponse()
            answer = json.loads(response.read())
        except (OSError, http.client.HTTPException, ValueError) as error:
            self.note("info", f, op_key, error=f"{type(error).__name__}: {error}".rstrip(": "))
            raise Unknown(f"{f} {op_key}: no answer ({type(error).__name__})") from None
        finally:
            connection.close()
        if response.status != 200:
            self.note("fail", f, op_key, error=answer.get("refused") or answer.get("error"))
            raise Refused(answer.get("refused") or answer.get("error"))
        self.note("ok", f, op_key, value=answer["ticket"])
        return answer["ticket"]

    def note(self, kind: str, f: str, op_key: str, **fields: object) -> None:
        """One Jepsen op line: invoke, then ok / fail / info, fsynced before the next step."""
        record = {"t_ns": MONOTONIC_NS(), "process": self.role, "type": kind, "f": f}
        record.update(key=op_key, **fields)
        append_json_line(self._history, record)


# The strategies a recovering caller may follow for an intent whose outcome is unknown. Each
# returns the ticket the workflow will record, or None: mark the call failed.
Recovery = Callable[[dict, TicketService], "int | None"]


def retry_new_key(intent: dict, service: TicketService) -> int | None:
    return service.create(f"{intent['op_key']}:retry-{uuid.uuid4().hex[:8]}", intent["title"])


def retry_same_key(intent: dict, service: TicketService) -> int | None:
    return service.create(intent["op_key"], intent["title"])


def reconcile(intent: dict, service: TicketService) -> int | None:
    found = service.lookup(intent["op_key"])
    return found if found is not None else service.create(intent["op_key"], intent["title"])


def give_up(intent: dict, service: TicketService) -> int | None:
    return None


RECOVERIES: dict[str, Recovery] = {
    "new_key": retry_new_key,
    "same_key": retry_same_key,
    "reconcile": reconcile,
    "give_up": give_up,
}


class Checkpoint:
    """The caller's own SQLite file: one intent row, committed before the call."""

    def __init__(self, trace: Trace) -> None:
        self.db = sqlite3.connect(CALLER_FILE, isolation_level=None)
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute(SCHEMA)
        self.trace = trace

    def intent(self) -> dict | None:
        row = self.db.execute("SELECT op_key, title, status, ticket FROM intent").fetchone()
        return dict(zip(("op_key", "title", "status", "ticket"), row, strict=True)) if row else None

    def save(self, op_key: str, title: str, status: str, ticket: int | None = None) -> None:
        self.db.execute(
            "INSERT INTO intent VALUES(?, ?, ?, ?) ON CONFLICT(op_key) DO UPDATE "
            "SET status=excluded.status, ticket=excluded.ticket",
            (op_key, title, status, ticket),
        )
        self.trace.event("checkpoint", op_key=op_key, status=status, ticket=ticket)


def learner_recovery(source: str) -> Recovery:
    """A recovery written by a reader (an exercise): its first function, run like the others."""
    import ast

    name = next(n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef))
    namespace: dict = {}
    exec(compile(source, LEARNER_FILE, "exec"), namespace)  # the reader's code, in their own lab
    return namespace[name]


def first_call(job: dict, checkpoint: Checkpoint, service: TicketService, gate: Gate) -> None:
    """Save the intent, call once, save what came back; an unknown outcome stays "unknown"."""
    checkpoint.save(job["op_key"], job["title"], "unknown")
    gate("intent_saved")
    try:
        ticket = service.create(job["op_key"], job["title"])
    except Unknown as error:
        print(f"{error}: the intent stays unknown")
        return
    except Refused:
        checkpoint.save(job["op_key"], job["title"], "failed")
        return
    gate("answered")
    checkpoint.save(job["op_key"], job["title"], "done", ticket)


def recover(job: dict, checkpoint: Checkpoint, service: TicketService, trace: Trace) -> None:
    """A fresh process: an intent still "unknown" is settled by the strategy, else left alone."""
    intent = checkpoint.intent()
    if intent is None or intent["status"] != "unknown":
        trace.event("skip", reason=f"the intent is {intent and intent['status']}: nothing to do")
        return
    strategy = job["strategy"]
    recovery = learner_recovery(job["recover_source"]) if strategy == "custom" else None
    trace.event("recover", strategy=strategy)
    try:
        ticket = (recovery or RECOVERIES[strategy])(dict(intent), service)
    except Unknown as error:
        print(f"{error}: the intent stays unknown")
        return
    except Refused:
        ticket = None
    except SystemExit:  # a reader's sys.exit is their error, shown at their line
        import traceback

        traceback.print_exc(file=sys.__stderr__)  # the worker's own (`FRESH_MAIN`)
        sys.exit(1)
    status = "failed" if ticket is None else "done"
    checkpoint.save(intent["op_key"], intent["title"], status, ticket)


def run_caller(job: dict) -> None:
    """The first call (role "caller") or the recovery of its intent (any other role)."""
    trace = Trace(job["run_dir"], job["role"])
    trace.event("start", strategy=job["strategy"], fault=job["fault"])
    gate = Gate(trace, job)
    checkpoint = Checkpoint(trace)
    first = job["role"] == "caller"
    service = TicketService(job, gate, job["timeout"], job["fault"] if first else "none")
    if first:
        first_call(job, checkpoint, service, gate)
    else:
        recover(job, checkpoint, service, trace)
    trace.event("exit", code=0)
