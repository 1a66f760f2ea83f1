"""The lab's services as crash points: lesson 6's claims and lesson 5's ticket service.

A step that claims a task through lesson 6's claim functions (`leases.stores`: select then
update, the conditional update, the lease) gets its crash point after the claim's commit named
as what it is, "claim claim_lease (tasks.db)", at the reader's line that called it; the commit
watch finds the commit itself, whether the claim commits on its own (autocommit) or in the
reader's transaction.

A step that calls lesson 5's ticket service takes it from `ticket_service()`: the service itself
(`unknown_outcome.service`), in a process of its own that serves this run's folder (its tickets in
the folder's tickets.db, so they are part of every crash state, and the default checker counts them:
each operation's ticket exactly once). Each call is two crash points, at the reader's line: "call
create KEY: before sending", just before its request is sent, and "reply create KEY", just after its
reply is read (the service's commit, if it made one, is that point). The calls' history and the
service's port file are the service's own bookkeeping, no effects (`NOT_EFFECTS`), where the run
called it: a history.jsonl of a run that never did is the reader's, judged (`bookkeeping`).
Worker-side: standard library only; lesson 5's modules are loaded only by a step that calls the
service.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from labkit.bench.output import flush_output
from labkit.bench.tickets import TICKETS_FILE
from labkit.studies.leases import stores as leases

if TYPE_CHECKING:
    from labkit.studies.explorer.record import CrashPoints
    from labkit.studies.unknown_outcome.caller import TicketService

__all__ = [
    "CLAIM_FUNCTIONS",
    "NOT_EFFECTS",
    "bookkeeping",
    "serve_here",
    "ticket_service",
    "watch_claims",
]

CLAIM_FUNCTIONS = ("claim_select_then_update", "claim_conditional", "claim_lease")
NOT_EFFECTS = ("history.jsonl", "port")  # lesson 5's caller.HISTORY_FILE and service.PORT_FILE
TENANT = "explored"  # one service per run folder: one tenant is enough
_here: dict = {}  # this worker: its run folder, role and crash points (`serve_here`)


def watch_claims(points: CrashPoints) -> None:
    """In this process, every claim function of lesson 6 (by name, and in its CLAIMS table)
    names the commit it makes. Done before the reader's module is loaded, so that a name it
    imports is the named one."""
    named = {name: naming(getattr(leases, name), points) for name in CLAIM_FUNCTIONS}
    for name, claim in named.items():
        setattr(leases, name, claim)
    for method, claim in leases.CLAIMS.items():
        leases.CLAIMS[method] = named.get(claim.__name__, claim)


def naming(claim: Callable, points: CrashPoints) -> Callable:
    """`claim`, with the next commit to its connection's file named after it."""

    @functools.wraps(claim)
    def claimed(db: sqlite3.Connection, *args: object, **kwargs: object) -> int | None:
        file = os.path.basename(db.execute("PRAGMA database_list").fetchone()[2])
        points.next_commit = ("claim", f"{claim.__name__} ({file})", file)
        try:
            return claim(db, *args, **kwargs)
        finally:
            if not db.in_transaction and points.watch is not None:  # its own commit (a
                points.watch.observe()  # RETURNING row read ends it) is seen now: its crash
                points.next_commit = None  # point at the reader's call (or it changed nothing)

    return claimed


def serve_here(job: dict, points: CrashPoints | None) -> None:
    """Say which run this worker is (and its crash points, if any) to `ticket_service`."""
    _here.update(run_dir=job["run_dir"], role=job["role"], points=points, service=None)


def bookkeeping() -> list[str]:
    """The service's own files in this run's folder: NOT_EFFECTS once this run called it."""
    return list(NOT_EFFECTS) if _here.get("service") is not None else []


def ticket_service(timeout: float = 5.0) -> TicketService:
    """Lesson 5's ticket service for your step (`create(op_key, title)`, `lookup(op_key)`):
    started on first use, in a process of its own that serves this run's folder."""
    if "run_dir" not in _here:
        from labkit.bench.errors import refusal  # here: a worker never pays for pathlib

        raise refusal("explore_ticket_service")
    if _here["service"] is None:
        from labkit.studies.unknown_outcome.caller import TicketService

        class ExploredService(TicketService):
            def _call(self, f: str, op_key: str, *request: object) -> int | None:
                return called(super()._call, f, op_key, *request)

        job = {"port": start_service(_here["run_dir"]), "tenant": TENANT, "role": _here["role"]}
        _here["service"] = ExploredService(job, lambda point: None, timeout)
    return _here["service"]


def called(call: Callable, f: str, op_key: str, *request: object) -> int | None:
    """One call into the service, with a crash point just before its request is sent and
    one just after its reply is read."""
    points = _here["points"]
    if points is None:  # a recovery: no crash points
        return call(f, op_key, *request)
    what = f"{f} {op_key}"
    points.hit("call", f"{what}: before sending", said={"code": "before_sending", "call": what})
    points.next_commit = ("reply", what, TICKETS_FILE)
    try:
        answer = call(f, op_key, *request)
    except BaseException:
        points.next_commit = None
        raise
    points.watch.observe()  # the service's commit, if it made one: the reply's point
    if points.next_commit is not None:
        points.next_commit = None
        points.hit("reply", what)
    return answer


def start_service(run_dir: str) -> int:
    """Fork the ticket service for `run_dir` and return its port once it listens. It ends when
    this process does (its end of the resume pipe closes). Its table is made first, so that a
    call commits once."""
    from labkit.bench.spares import close_all_but
    from labkit.bench.tickets import Tickets
    from labkit.studies.unknown_outcome.service import PORT_FILE, serve

    Tickets(run_dir).close()
    notify_r, notify_w = os.pipe()
    resume_r, resume_w = os.pipe()
    flush_output()  # nothing buffered may be written twice, once by each process
    if os.fork() == 0:  # the service: it ends by os._exit once its parent has gone
        try:
            if _here["points"] is not None:
                _here["points"].armed = False  # the service's commits are not the step's
            close_all_but(0, 1, 2, notify_w, resume_r)
            job = {"run_dir": run_dir, "role": "service", "pause_at": ["listening"]}
            serve({**job, "notify_fd": notify_w, "resume_fd": resume_r})
        except BaseException:
            import traceback

            traceback.print_exc()  # into the run's stderr, as a worker's error goes
        finally:
            os._exit(1)
    os.close(notify_w)
    os.close(resume_r)
    said = os.read(notify_r, 64)
    os.close(notify_r)
    if not said:
        raise RuntimeError("the ticket service did not start: see the run's stderr")
    with open(os.path.join(run_dir, PORT_FILE)) as port:
        number = int(port.read())
    os.write(resume_w, b"continue\n")  # resume_w stays open: the service lives while we do
    return number
