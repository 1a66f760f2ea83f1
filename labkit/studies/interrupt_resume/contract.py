"""Study 001 §04 and §05: what the ticket service's key contract covers, tried directly.

Each request is (tenant, key, body), the body a JSON object as it arrives on the wire. The
service parses it, so a body that differs only in formatting (key order, spaces) is the same
payload; every field is compared, not only the title. Keys are per tenant: the same key under
team-B is team-B's own operation. With `issued`, a trusted entry point has issued the keys
(one per confirmed request, kept in `entry.db`) and the service refuses a key it did not
issue: a caller (a model, a retry loop) cannot switch keys to get around a refusal.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from labkit.bench.errors import check_folder, refusal
from labkit.bench.folders import holds_run_dirs, new_run_dir
from labkit.bench.snapshot import read_tables
from labkit.bench.tickets import TICKETS_FILE, PayloadConflict, Tickets

__all__ = [
    "ENTRY_FILE",
    "FIRST_INPUT",
    "NOTHING_SAVED",
    "TENANT",
    "TicketAnswer",
    "ask_ticket_service",
    "entry_key",
    "key_function",
]

ENTRY_FILE = "entry.db"
KEY_FILE = "<your operation_key>"  # the reader's key function, as its errors name it
FIRST_INPUT = {"operation_id": "request-42/create-ticket/v1", "title": "Printer offline"}
TENANT = "team-A"  # the study's tenant; the graphs' node creates every ticket under it
# How a resuming process resumed (its report's resumed_how): a list of its calls, as code
# ("invoke(None)"), or this code when the file held nothing to resume; a view says it in words.
NOTHING_SAVED = "nothing_saved"


def key_function(job: dict) -> Callable[[dict], str]:
    """Where the node's operation key comes from: `fresh` (a new UUID on every run), `stable`
    (the operation id of the first input), or `custom` (a reader's own `operation_key`)."""
    if job["key"] == "custom":
        namespace: dict = {}
        code = compile(job["key_source"], KEY_FILE, "exec")  # a traceback names it so
        exec(code, namespace)  # the reader's own code, in the reader's own lab
        return namespace["operation_key"]
    if job["key"] == "stable":
        return lambda state: state["operation_id"]
    return lambda state: str(uuid.uuid4())


def entry_key(request_id: str, operation: str = "create-ticket", version: int = 1) -> str:
    """The key a trusted entry point issues for a confirmed request: one per operation."""
    return f"{request_id}/{operation}/v{version}"


@dataclass
class TicketAnswer:
    """What the service answered to one request: a ticket id, or why it refused."""

    tenant: str
    key: str
    body: str
    ticket_id: int | None  # None when refused
    refused: dict | None  # why, when refused: {"code": "not_issued"} or "payload_conflict"


def parsed(request: object) -> tuple[str, str, str, dict]:
    """(tenant, key, body, fields) of one request, or LabError naming the form."""
    if not (
        isinstance(request, tuple | list)
        and len(request) == 3
        and all(isinstance(part, str) for part in request)
    ):
        raise refusal("request_form", value=repr(request))
    try:
        fields = json.loads(request[2])
    except json.JSONDecodeError:
        fields = None
    if not isinstance(fields, dict) or not isinstance(fields.get("title"), str):
        raise refusal("request_body", body=repr(request[2]))
    return (*request, fields)


def issued_pair(pair: object) -> tuple[str, str]:
    """One (tenant, key) pair the entry point issued, or LabError naming the form."""
    if not (
        isinstance(pair, tuple | list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
    ):
        raise refusal("issued_key_form", value=repr(pair))
    return tuple(pair)


def issue_keys(run_dir: Path, issued: Iterable[tuple[str, str]]) -> sqlite3.Connection:
    """The entry point's file: the (tenant, key) pairs it issued."""
    entry = sqlite3.connect(run_dir / ENTRY_FILE, isolation_level=None)
    entry.execute("CREATE TABLE issued(tenant TEXT, op_key TEXT, PRIMARY KEY(tenant, op_key))")
    entry.executemany("INSERT INTO issued VALUES(?, ?)", list(issued))
    return entry


@holds_run_dirs
def ask_ticket_service(
    requests: Iterable,
    issued: Iterable[tuple[str, str]] | None = None,
    out: Path | str | None = None,
) -> tuple[list[TicketAnswer], list[list]]:
    """Send each request in turn to a fresh ticket service; its answers and the tickets it holds.
    `issued`: the (tenant, key) pairs a trusted entry point issued; any other key is refused."""
    requests = [parsed(request) for request in requests]  # all checked before the folder
    pairs = None if issued is None else [issued_pair(pair) for pair in issued]
    run_dir = new_run_dir(check_folder("out", out), prefix="tickets-")
    entry = issue_keys(run_dir, pairs) if pairs is not None else None
    tickets, answers = Tickets(run_dir), []
    for tenant, key, body, fields in requests:
        known = (
            entry is None
            or entry.execute(
                "SELECT 1 FROM issued WHERE tenant=? AND op_key=?", (tenant, key)
            ).fetchone()
        )
        if not known:
            answers.append(TicketAnswer(tenant, key, body, None, {"code": "not_issued"}))
            continue
        title = fields.pop("title")
        try:
            answers.append(
                TicketAnswer(tenant, key, body, tickets.create(tenant, key, title, fields), None)
            )
        except PayloadConflict as conflict:
            refusal = {"code": "payload_conflict", "held": conflict.held, "sent": conflict.sent}
            answers.append(TicketAnswer(tenant, key, body, None, refusal))
    tickets.close()
    if entry is not None:
        entry.close()
    return answers, read_tables(run_dir / TICKETS_FILE)["ticket"].rows
