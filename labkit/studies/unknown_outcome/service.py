"""The ticket service: study 001's receiver behind HTTP, in a process of its own.

Started by the lab as a worker (entry `labkit.studies.unknown_outcome.service:serve`). It
binds 127.0.0.1 on a free port, writes the port to `port` and a secret of its own to `SECRET_FILE`
(mode 0600) in its folder, stops once at the gate (`listening`) so the parent reads both, then
serves until the parent kills it. Tickets go to its own `tickets.db` through `Tickets`
(UNIQUE(tenant, op_key): the same key returns the original ticket, a changed payload is
refused with 409).

Who it answers: only a request that carries the secret (header `X-Labkit-Secret`), that is
its lab and the lab's callers, who read it from the file. 127.0.0.1 is open to every user of
the machine, so anyone else's request, a fault header included, is refused with 403 and traced
("stranger refused", without a tenant), and touches no ticket.

    POST /tickets            {"tenant", "op_key", "title"} → {"ticket": id} or 409 {"refused"}
    GET  /tickets?tenant=&op_key=                           → {"ticket": id or null}
    GET  /quiet?tenant=      releases what a fault held back, waits until none is in flight

A fault comes with the request (header `X-Labkit-Fault`), so one service serves a sweep:
`service_killed` ends the process after the commit, before the reply (the gate's exit 91);
`reply_lost` holds the reply after the commit, `still_working` holds the work before it,
until the lab asks for quiet, once the recovering caller has ended: the held work lands after
whatever the recovery did, however long it waited or however often it looked. Every event goes
to the folder's trace with its tenant. It ends by itself when its parent has gone. Standard
library only.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from labkit.bench.gate import Gate
from labkit.bench.tickets import PayloadConflict, Tickets
from labkit.bench.trace import Trace
from labkit.studies.unknown_outcome.caller import FAULT_HEADER, SECRET_FILE, SECRET_HEADER

__all__ = ["HOST", "PORT_FILE", "serve"]

HOST = "127.0.0.1"  # never any other address: the lab talks to itself only
PORT_FILE = "port"
KILL_POINT = "after commit"  # where `service_killed` ends the service
HOLD_LIMIT = 30.0  # seconds a held request waits at most, should nobody release it


class TenantTrace:
    """The service's trace with the tenant on every event: a sweep's trials share one service."""

    def __init__(self, trace: Trace, tenant: str) -> None:
        self.trace, self.tenant = trace, tenant

    def event(self, name: str, **fields: object) -> None:
        self.trace.event(name, tenant=self.tenant, **fields)

    def note(self, name: str, **fields: object) -> None:  # a Gate's points: written, no fsync
        self.trace.note(name, tenant=self.tenant, **fields)


class Holds:
    """Requests in flight per tenant, and the ones a fault holds back until released."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.busy: Counter[str] = Counter()
        self.released: set[str] = set()

    def begin(self, tenant: str) -> None:
        with self.changed:
            self.busy[tenant] += 1

    def end(self, tenant: str) -> None:
        with self.changed:
            self.busy[tenant] -= 1
            self.changed.notify_all()

    def hold(self, tenant: str) -> None:
        """Wait until the lab releases this tenant's held requests. Not when the recovery's
        first request is answered: a recovery that only looks, and looks again, would then find
        the ticket the held work made, and pass for one that settles an unknown outcome."""
        with self.changed:
            self.changed.wait_for(lambda: tenant in self.released, HOLD_LIMIT)

    def quiet(self, tenant: str) -> None:
        """Release the tenant's held requests and wait until none is in flight."""
        with self.changed:
            self.released.add(tenant)
            self.changed.notify_all()
            self.changed.wait_for(lambda: self.busy[tenant] == 0, HOLD_LIMIT)


class TicketServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, folder: str, trace: Trace) -> None:
        super().__init__((HOST, 0), Handler)
        self.folder, self.trace, self.holds = folder, trace, Holds()
        self.secret = secrets.token_hex(32)  # a new one each start: a restart ends the old


class Handler(BaseHTTPRequestHandler):
    server: TicketServer

    def log_message(self, *args: object) -> None:
        """Quiet: the trace records every request."""

    def reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def admitted(self) -> bool:
        """Whether the request carries this service's secret. Anyone else is refused and
        traced before its body is read: a stranger creates nothing and kills nothing."""
        given = self.headers.get(SECRET_HEADER, "").encode()
        if hmac.compare_digest(given, self.server.secret.encode()):  # in constant time
            return True
        why = "a wrong secret" if given else "no secret"
        fault = self.headers.get(FAULT_HEADER, "none")
        self.server.trace.event("stranger refused", why=why, path=self.path, fault=fault)
        self.reply(403, {"error": f"refused: {why}; this service answers only its own lab"})
        return False

    def do_POST(self) -> None:
        if not self.admitted():
            return
        if urlsplit(self.path).path != "/tickets":
            self.reply(404, {"error": f"no such path {self.path}"})
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        tenant, op_key, title = body["tenant"], body["op_key"], body["title"]
        fault = self.headers.get(FAULT_HEADER, "none")
        trace, holds = TenantTrace(self.server.trace, tenant), self.server.holds
        trace.event("request", f="create", op_key=op_key, fault=fault)
        holds.begin(tenant)
        try:
            if fault == "still_working":
                trace.event("working", op_key=op_key)
                holds.hold(tenant)
            tickets = Tickets(self.server.folder)
            try:
                known = tickets.find(tenant, op_key)  # only to name the event: new or original
                ticket = tickets.create(tenant, op_key, title)
            except PayloadConflict as refusal:
                trace.event("refused", op_key=op_key, reason=str(refusal))
                self.reply(409, {"refused": str(refusal)})
                return
            finally:
                tickets.close()
            trace.event("commit" if known is None else "original", op_key=op_key, ticket=ticket)
            gate_plan = {"exit_at": KILL_POINT if fault == "service_killed" else None}
            Gate(trace, gate_plan)(KILL_POINT)  # service_killed: os._exit(91) right here
            if fault == "reply_lost":
                trace.event("holding reply", op_key=op_key, ticket=ticket)
                holds.hold(tenant)
            self.send_ticket(trace, op_key, ticket)
        finally:
            holds.end(tenant)

    def send_ticket(self, trace: TenantTrace, op_key: str, ticket: int | None) -> None:
        """Reply with the ticket; a caller that has gone leaves the reply nowhere to go."""
        try:
            self.reply(200, {"ticket": ticket})
            trace.event("reply", op_key=op_key, ticket=ticket)
        except OSError as error:
            trace.event("reply lost", op_key=op_key, ticket=ticket, error=type(error).__name__)

    def do_GET(self) -> None:
        if not self.admitted():
            return
        url = urlsplit(self.path)
        query = {name: values[0] for name, values in parse_qs(url.query).items()}
        tenant = query.get("tenant", "")
        if url.path == "/quiet":
            self.server.holds.quiet(tenant)
            self.reply(200, {"quiet": tenant})
        elif url.path == "/tickets" and "op_key" in query:
            trace, holds = TenantTrace(self.server.trace, tenant), self.server.holds
            trace.event("request", f="read", op_key=query["op_key"])
            holds.begin(tenant)
            try:
                tickets = Tickets(self.server.folder)
                try:
                    ticket = tickets.find(tenant, query["op_key"])
                finally:
                    tickets.close()
                self.send_ticket(trace, query["op_key"], ticket)
            finally:
                holds.end(tenant)
        else:
            self.reply(404, {"error": f"no such path {self.path}"})


def serve(job: dict) -> None:
    """Serve tickets on 127.0.0.1 until killed; the port goes to `port` in the run folder,
    the secret to `SECRET_FILE`, which only this user may read."""
    folder = job["run_dir"]
    trace = Trace(folder, job["role"])
    server = TicketServer(folder, trace)
    port = server.server_address[1]
    publish(folder, PORT_FILE, str(port), 0o644)
    publish(folder, SECRET_FILE, server.secret, 0o600)
    trace.event("listening", host=HOST, port=port)
    Gate(trace, job)("listening")  # the parent reads port and secret while the service waits
    threading.Thread(target=end_with_parent, args=(job["resume_fd"],), daemon=True).start()
    server.serve_forever()


def publish(folder: str, name: str, text: str, mode: int) -> None:
    """Write the file `name` whole, with `mode` from its first byte on: never read half-written,
    never readable by others for a moment."""
    draft = os.path.join(folder, f"{name}.new")
    with open(os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode), "w") as out:
        out.write(text)
    os.replace(draft, os.path.join(folder, name))


def end_with_parent(resume_fd: int) -> None:
    """End the service when the parent has gone (its end of the resume pipe closes, however it
    died: a killed kernel never kills its service), so no service outlives its lab."""
    while os.read(resume_fd, 64):
        pass
    os._exit(0)
