"""Lesson 5, the outbox in a LangGraph graph: a replayed node, a single delivery.

A run: a worker forked from the trial server runs the graph (graph.py) with a
SqliteSaver, and its parent SIGKILLs it inside the node, after the node committed the order and
its outbox row and before LangGraph saved the node's result. A fresh forked worker resumes the
thread with invoke(None): the node runs again and, its writes keyed, adds nothing. Then the
ordinary relay (relay.py, a fresh process) delivers the one message to the consumer. The ledger
counts the node's runs; the files count rows, deliveries and effects. This module is the
kernel's side: it never imports LangGraph (the graph runs in the trial server).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import Path

from labkit.bench import server
from labkit.bench.errors import check_folder, check_function
from labkit.bench.failures import FAILED, failing_run, first_failure
from labkit.bench.folders import keep_json
from labkit.bench.launcher import WorkerProcess, WorkerReport, read_report
from labkit.bench.ledger import read_ledger
from labkit.bench.snapshot import take_snapshot
from labkit.bench.trace import read_trace
from labkit.studies.outbox.experiment import (
    OutboxSpec,
    outbox_counts,
    outbox_state_word,
    prepare_outbox,
    run_stage,
    with_consumers,
)
from labkit.studies.outbox.stores import BUSINESS_FILE, FILES

__all__ = ["GRAPH_KILL_POINT", "run_here", "run_outbox_graph"]

GRAPH_KILL_POINT = "node_committed"  # in the node: its commit done, its result not yet saved
GRAPH_ENTRY = "labkit.studies.outbox.graph:"
# The order's key is the node's operation key: one order per key, so a replay adds none.
ONE_ORDER_PER_KEY = "CREATE UNIQUE INDEX order_key ON orders(order_key)"


def graph_stage(spec: OutboxSpec, run_dir: Path, role: str, entry: str) -> WorkerReport:
    """One forked graph worker, run to its end or SIGKILLed at the kill point if it is the
    first one."""
    kill_at = GRAPH_KILL_POINT if role == "graph" else None
    with WorkerProcess(
        run_dir,
        role,
        GRAPH_ENTRY + entry,
        {},
        pause_at=(kill_at,) if kill_at else (),
        timeout=spec.timeout,
        start_mode="fork",
    ) as worker:
        worker.finish(kill_at=kill_at)
    return worker.report()


def run_here(
    consumer: str, timeout: float, out: str | None = None, progress: Callable | None = None
) -> dict:
    """In the trial server: graph (killed), resume (node replayed), relay; the figures.
    `progress(done, 3, None)` as each of the three ends."""
    spec = OutboxSpec(consumer, out=check_folder("out", out), timeout=timeout)
    step = progress or (lambda done, total, item: None)
    run_dir = prepare_outbox(spec)
    with failing_run(run_dir):
        with contextlib.closing(sqlite3.connect(run_dir / BUSINESS_FILE)) as db:
            db.execute(ONE_ORDER_PER_KEY)
        stages = {"graph": graph_stage(spec, run_dir, "graph", "first_process")}
        step(1, 3, None)
        stages["resume"] = graph_stage(spec, run_dir, "resume", "resume_process")
        step(2, 3, None)
        before = take_snapshot(run_dir, FILES)  # what the graph left for the relay
        stages["relay"] = run_stage(spec, run_dir, "relay")
        step(3, 3, None)
        after = take_snapshot(run_dir, FILES)
        workers = with_consumers(run_dir, stages)
        plans = ((w, GRAPH_KILL_POINT if role == "graph" else None) for role, w in workers.items())
        failure = first_failure(plans)
        ledger = [
            {k: line[k] for k in ("pid", "wrote_order", "wrote_message")}
            for line in read_ledger(run_dir)
        ]
        result = {
            "consumer": spec.consumer,
            "node_runs": len(ledger),
            "ledger": ledger,
            "found_next": read_report(run_dir, "resume").get("found_next"),
            "before_relay": outbox_counts(before),
            "after": outbox_counts(after),
            "deliveries": sum(e["event"] == "deliver" for e in read_trace(run_dir)),
            "exits": {role: report.exit_code for role, report in workers.items()},
            "killed": next((r for r, w in workers.items() if w.killed_at), None),
            "outcome": FAILED if failure else outbox_state_word(after),
            "failure": failure,
            "run_dir": str(run_dir),
        }
        keep_json(run_dir, results=result)
    return result


def run_outbox_graph(
    consumer: str = "plain",
    out: Path | str | None = None,
    timeout: float = 10.0,
    progress: Callable[[int, int, object], None] | None = None,
) -> dict:
    """Kill the graph after its node committed the order and its outbox row, resume it in a
    fresh process (the node runs again, writing nothing new), relay: the figures as a dict
    (node_runs and the ledger, the counts before the relay and after, deliveries, outcome).
    `progress(done, 3, None)` as each of the three steps ends."""
    spec = OutboxSpec(consumer, out=check_folder("out", out), timeout=timeout)  # bad input here
    check_function("progress", progress)
    where = None if spec.out is None else str(spec.out)
    return server.call(
        "labkit.studies.outbox.replay:run_here",
        progress,
        consumer=consumer,
        timeout=timeout,
        out=where,
    )
