"""Study 001 §06, run: two processes create a ticket with one key at the same moment.

The receiver (labkit/bench/tickets.py) looks the key up, compares and inserts in one
`BEGIN IMMEDIATE` transaction, so the second process cannot even look until the first has
written: one ticket, and the second gets its id back. The interleaving that would make two is
forced with the gate, not left to luck: the first racer stops between its look-up and its
insert, and the second is let go then.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from labkit.bench.errors import check_folder, check_number
from labkit.bench.folders import holds_run_dirs, keep_json, new_run_dir
from labkit.bench.launcher import WorkerProcess
from labkit.bench.tickets import Tickets
from labkit.bench.trace import read_trace

__all__ = ["TicketRace", "reached", "run_ticket_race"]

JOB = {"tenant": "team-A", "op_key": "op-race", "title": "same"}
RACERS = ("racer1", "racer2")


@dataclass(frozen=True)
class TicketRace:
    """What the race left: the ticket id each racer was given, whether the second was held off
    while the first stood between its look-up and its insert, the service's rows."""

    ids: dict[str, str]
    held_off: bool
    tickets: list[tuple]
    run_dir: Path


def reached(run_dir: Path, role: str, point: str, within: float) -> bool:
    """Whether the worker `role` passes its gate at `point` within `within` seconds (its
    trace says so the moment it does)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if any(e.get("role") == role and e.get("point") == point for e in read_trace(run_dir)):
            return True
        time.sleep(0.02)
    return False


@holds_run_dirs
def run_ticket_race(out: str | None = None, hold: float = 1.0) -> TicketRace:
    """Two racer processes, one key: the first stopped between its look-up and its insert for
    `hold` seconds while the second tries to look; then both finish."""
    hold = check_number("hold", hold, 0, 30)
    run_dir = new_run_dir(check_folder("out", out), prefix="ticket-race-")
    racers = [
        WorkerProcess(
            run_dir, role, "labkit.bench.tickets:create_when_told", JOB, pause_at=("ready", "read")
        )
        for role in RACERS
    ]
    first, second = racers
    try:
        for racer in racers:
            racer.start()
            racer.wait_for_pause()  # "ready"
        first.resume()
        first.wait_for_pause()  # "read": it has looked, and not written yet
        second.resume()  # a BEGIN and a SELECT away from "read", unless the first holds it off
        held_off = not reached(run_dir, second.role, "read", within=hold)
        first.resume()
        first.wait()
        if held_off:
            second.wait_for_pause()  # "read", only now: after the first one's commit
        second.resume()
        second.wait()
    finally:
        for racer in racers:
            racer.close()
    ids = {racer.role: racer.report().stdout.strip() for racer in racers}
    tickets = Tickets(run_dir)
    try:
        rows = tickets.rows()
    finally:
        tickets.close()
    keep_json(run_dir, results={"ids": ids, "held_off": held_off, "tickets": rows})
    return TicketRace(ids, held_off, rows, run_dir)
