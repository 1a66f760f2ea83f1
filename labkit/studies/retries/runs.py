"""Lesson 8's runs as the trial server runs them: each section's workers, forked from the server,
then what the files hold: the ledger (what ran), the payment service (what was charged) and the
checkpoint file (what LangGraph saved). One call from the kernel per run; results are dicts.

Runs only inside the trial server, which has LangGraph imported (the checkpoint file's name
comes from the bench's LangGraph module); the kernel reaches it through `experiment`.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

from labkit.bench.checkpoints import CHECKPOINT_FILE
from labkit.bench.failures import Failure, failing_run, first_failure, worker_failure
from labkit.bench.folders import keep_json, new_run_dir
from labkit.bench.launcher import WorkerProcess, WorkerReport, read_report
from labkit.bench.ledger import read_ledger, rerun_nodes
from labkit.bench.snapshot import read_tables
from labkit.bench.tickets import TICKETS_FILE
from labkit.bench.trace import read_trace
from labkit.studies.retries.drain import NODES, SERVED, SIGNALLED_NODE
from labkit.studies.retries.outcome import order_outcome
from labkit.studies.retries.spec import DrainSpec, FunctionalSpec, HandlerSpec, RetrySpec

__all__ = [
    "forked",
    "run_drain",
    "run_functional",
    "run_handler",
    "run_retry",
    "saved_checkpoints",
]

ENTRIES = "labkit.studies.retries."
STOP = f"inside:{SIGNALLED_NODE}"  # where a drain's first process is stopped
RETURN = "__return__"  # the channel a functional task's result is written to


def forked(
    run_dir: Path, role: str, entry: str, job: dict, timeout: float, **plan: object
) -> WorkerProcess:
    """A worker forked from this server, running `entry` of one of lesson 8's modules."""
    return WorkerProcess(
        run_dir, role, ENTRIES + entry, job, timeout=timeout, start_mode="fork", **plan
    )


def saved_checkpoints(run_dir: Path | str) -> list[dict]:
    """The `checkpoints` rows as the file holds them now: each one's step and source ("input"
    is the accepted input, "loop" a finished step), in the order they were saved."""
    path = Path(run_dir) / CHECKPOINT_FILE
    table = read_tables(path).get("checkpoints") if path.exists() else None
    if table is None:  # no file, or a saver that never made its tables
        return []
    metadata = table.columns.index("metadata")
    found = [json.loads(row[metadata]) for row in table.rows]
    return [{"step": m.get("step"), "source": m.get("source")} for m in found]


def saved_task_results(run_dir: Path) -> int:
    """How many tasks' results the checkpoint file holds now (each one a `__return__` write)."""
    path = run_dir / CHECKPOINT_FILE
    table = read_tables(path).get("writes") if path.exists() else None
    if table is None:
        return 0
    channel = table.columns.index("channel")
    return sum(row[channel] == RETURN for row in table.rows)


def until_saved(run_dir: Path, tasks: int, by: float) -> None:
    """Wait until the checkpoint file holds the results of `tasks` tasks, or the moment `by`."""
    while saved_task_results(run_dir) < tasks and time.monotonic() < by:
        time.sleep(0.002)


def charges(run_dir: Path) -> list[dict]:
    """The payment service's rows: every charge or refund it holds, with its key."""
    path = run_dir / TICKETS_FILE
    rows = read_tables(path)["ticket"].rows if path.exists() else []
    return [{"id": r[0], "key": r[2], "what": json.loads(r[3])["title"]} for r in rows]


def roles_of(*workers: WorkerProcess) -> dict[int, str]:
    return {w.proc.pid: w.role for w in workers}


def run_retry(spec: dict, out: str | None = None) -> dict:
    """Each order's run through the payment node under the spec's policy and key."""
    spec = RetrySpec(**spec)
    run_dir = new_run_dir(out, prefix="retry-")
    with failing_run(run_dir):
        job = {"spec": spec.to_json()}
        with forked(run_dir, "charges", "payments:charge_orders", job, spec.timeout) as worker:
            worker.wait()
        ended = read_report(run_dir, "charges").get("orders", {})
        lines = read_ledger(run_dir)
        orders = []
        for order in [f"order-{n}" for n in range(1, spec.orders + 1)]:
            mine = [line for line in lines if line.get("order") == order]
            new = sum(bool(line.get("new")) for line in mine)
            end = ended.get(order, {"receipt": None, "error": "the worker left no report"})
            orders.append(
                {
                    "order": order,
                    "attempts": len(mine),
                    "new_charges": new,
                    "keys": [line.get("key") for line in mine],
                    **end,
                    "outcome": order_outcome(new, end["receipt"], end["error"]),
                }
            )
        result = {
            "spec": spec.to_json(),
            "orders": orders,
            "charges": charges(run_dir),
            "attempts": [
                {k: line.get(k) for k in ("order", "attempt", "phase", "key", "charge", "new")}
                for line in lines
            ],
            "checkpoints": len(saved_checkpoints(run_dir)),
            "failure": first_failure([(worker.report(), None)]),
            "run_dir": str(run_dir),
        }
        keep_json(run_dir, results=result)
    return result


def run_handler(spec: dict, out: str | None = None) -> dict:
    """Issue #9002 across two processes: stop at the interrupt with the refund paid, resume."""
    spec = HandlerSpec(**spec)
    run_dir = new_run_dir(out, prefix="handler-")
    with failing_run(run_dir):
        job = {"way": spec.way, "keyed": spec.keyed}
        with forked(run_dir, "first", "handlers:first_process", job, spec.timeout) as first:
            first.wait()
        at_interrupt = saved_checkpoints(run_dir)
        with forked(run_dir, "resume", "handlers:resume_process", job, spec.timeout) as resume:
            resume.wait()
        roles = roles_of(first, resume)
        refunds = [line for line in read_ledger(run_dir) if line["node"] == "refund"]
        result = {
            "spec": spec.to_json(),
            "handler_runs": {
                role: sum(roles[line["pid"]] == role for line in refunds) for role in roles.values()
            },
            "handler_saw": [line["error"] for line in refunds],
            "refunds": [c for c in charges(run_dir) if c["what"].startswith("refund")],
            "first": read_report(run_dir, "first"),
            "resume": read_report(run_dir, "resume"),
            "checkpoints_at_interrupt": len(at_interrupt),
            "failure": first_failure([(first.report(), None), (resume.report(), None)]),
            "run_dir": str(run_dir),
        }
        keep_json(run_dir, results=result)
    return result


def stop_while_b_works(first: WorkerProcess, spec: DrainSpec) -> str:
    """Stop the first process inside b as the spec says; how it ended, as a code (a view
    says it in words, beside the exit status)."""
    point = first.wait_for_pause()
    if point != STOP:  # it ended, or timed out, before b: the report says why
        if point is not None:  # its serve returned (SERVED): let it end
            first.resume()
            first.wait()
        return "no_stop"
    if spec.signal == "kill":
        first.kill()
        return "killed"
    if spec.signal == "term":
        first.proc.send_signal(signal.SIGTERM)
        if not ended_within(first, spec.grace):
            first.kill()  # the grace period is over: what an orchestrator does next
            return "killed_after_grace"
    else:
        first.resume()
    code = first.wait()
    if code == -signal.SIGTERM:
        return "terminated_by_sigterm"
    return "exited" if code >= 0 else "signalled"  # the status is the result's first_exit


def timed(spec: DrainSpec) -> tuple[str, ...]:
    """The stops where a SIGTERM's grace is judged (`ended_within`): the end of each node's
    work from the signalled one on, and the end of the serve."""
    if spec.signal != "term":
        return ()
    signalled_on = NODES[NODES.index(SIGNALLED_NODE) :]
    return (*(f"worked:{node}" for node in signalled_on), SERVED)


def ended_within(first: WorkerProcess, grace: float) -> bool:
    """Let the worker go on after SIGTERM; True if it exits within `grace` s of its own time. At
    the end of each node's work it stops ("worked:<node>"), and once more as its serve returns
    ("served"); its own clock's reading there decides: work that ended after the grace is where
    the orchestrator's SIGKILL came, so the worker is stopped right there, that node started and
    not ended. The time it waits for the lab at those stops is not its own: the grace's end
    moves on by it. So a parent that wakes late (a busy machine) neither lets it run past the
    grace nor eats into it."""
    grace_ends = time.monotonic() + grace
    first.resume()
    while (point := first.wait_for_pause(until=grace_ends)) is not None:
        reached = reached_at(first, point)
        if reached > grace_ends:
            return False
        grace_ends += time.monotonic() - reached  # held for the lab
        first.resume()
    try:  # it exited (only its interpreter's end was left), or the grace is over
        first.proc.wait(timeout=max(grace_ends - time.monotonic(), 0.0))
    except subprocess.TimeoutExpired:
        return False
    return True


def reached_at(worker: WorkerProcess, point: str) -> float:
    """When the worker noted `point`, on its own monotonic clock (seconds, as time.monotonic)."""
    noted = [
        e["t_ns"]
        for e in read_trace(worker.run_dir)
        if e["role"] == worker.role and e["event"] == "point" and e["point"] == point
    ]
    return noted[-1] / 1e9


def own_failure(worker: WorkerReport) -> Failure | None:
    """A stopped worker fails the run only by its own error or a timeout: a signal, or the
    kill after the grace period, is how the section stops it."""
    if worker.timed_out or (worker.exit_code or 0) > 0:
        return worker_failure(worker)
    return None


def run_drain(spec: dict, out: str | None = None) -> dict:
    """Stop the graph while b works (drain, SIGTERM + grace, SIGKILL), then resume it."""
    spec = DrainSpec(**spec)
    run_dir = new_run_dir(out, prefix="drain-")
    with failing_run(run_dir):
        job = {k: v for k, v in spec.to_json().items() if k != "timeout"}
        plan = {"pause_at": (STOP, *timed(spec))}
        with forked(run_dir, "first", "drain:first_process", job, spec.timeout, **plan) as first:
            ended = stop_while_b_works(first, spec)
        at_stop = saved_checkpoints(run_dir)
        with forked(run_dir, "resume", "drain:resume_process", job, spec.timeout) as resume:
            resume.wait()
        roles = roles_of(first, resume)
        lines = read_ledger(run_dir)
        starts = Counter((roles[ln["pid"]], ln["node"]) for ln in lines if ln["phase"] == "start")
        first_report = first.report()
        result = {
            "spec": {k: v for k, v in spec.to_json().items() if k != "serve_source"},
            "ended": ended,
            "first_exit": first_report.exit_code,
            "checkpoints_at_stop": len(at_stop),
            "ran": {
                role: [n for n in ("a", "b", "c", "d") if starts[role, n]]
                for role in ("first", "resume")
            },
            "rerun_nodes": rerun_nodes(lines),
            "resume": read_report(run_dir, "resume"),
            "first_worker": first_report.to_json(),  # its stderr: a reader's serve's error
            "failure": (None if spec.serve_source else own_failure(first_report))  # theirs
            or first_failure([(resume.report(), None)]),
            "run_dir": str(run_dir),
        }
        keep_json(run_dir, results=result)
    return result


def run_functional(spec: dict, out: str | None = None) -> dict:
    """The functional API killed inside `ship`, resumed in a fresh process."""
    spec = FunctionalSpec(**spec)
    run_dir = new_run_dir(out, prefix="functional-")
    with failing_run(run_dir):
        job = {"ref_in_task": spec.ref_in_task, "writes_delay_ms": spec.writes_delay_ms}
        point = "inside:ship"
        with forked(
            run_dir, "first", "functional:first_process", job, spec.timeout, pause_at=(point,)
        ) as first:
            if first.wait_for_pause() == point:
                # LangGraph saves a task's result from a thread of its own once the task has
                # returned, `sync` or not: the kill comes when the file holds each finished one
                finished = ("make_ref", "charge") if spec.ref_in_task else ("charge",)
                until_saved(run_dir, len(finished), by=time.monotonic() + spec.timeout)
                first.kill()
            first.wait()
        with forked(run_dir, "resume", "functional:resume_process", job, spec.timeout) as resume:
            resume.wait()
        roles = roles_of(first, resume)
        lines = [
            {"role": roles[ln["pid"]], "node": ln["node"], "phase": ln["phase"], "ref": ln["ref"]}
            for ln in read_ledger(run_dir)
        ]
        runs = Counter(ln["node"] for ln in lines if ln["phase"] in ("top", "ran", "start"))
        charged = next((ln["ref"] for ln in lines if ln["node"] == "charge"), None)
        shipped = read_report(run_dir, "resume").get("result", {}).get("shipped_ref")
        result = {
            "spec": spec.to_json(),
            "lines": lines,
            "runs": {node: runs[node] for node in ("entrypoint", "charge", "ship")},
            "charged_ref": charged,
            "shipped_ref": shipped,
            "charges": charges(run_dir),
            "failure": first_failure([(first.report(), point), (resume.report(), None)]),
            "run_dir": str(run_dir),
        }
        keep_json(run_dir, results=result)
    return result
