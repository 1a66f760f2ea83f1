"""Lesson 6 in LangGraph, the kernel's side: two processes resume one thread, under a schedule
the lab forces. It never imports LangGraph: the workers are forked by the trial server
(`graph.py` holds the graph), and this module's `run_here` runs there.

Four cases, each the same on every run:
- `race`: both resumers load the checkpoint that holds the interrupt (each stops in `review`
  until the other has too), then both go on: both publish, and the thread's checkpoint chain
  forks (two children of one checkpoint).
- `locked`: the first resumer is frozen (SIGSTOP) inside a checkpoint write, holding the file's
  write lock; the second waits `lock_timeout` and dies of `database is locked`.
- `claimed`: each resumer claims the thread first (a lease, a fencing token); the second finds
  it held and does not resume: one publish, one chain.
- `stalled`: the claim's winner is frozen past its lease, in `review` with the checkpoint
  loaded; the second claims (token 34), resumes and publishes; the first, thawed, goes on: the
  fenced receiver refuses its publish, but its checkpoints still fork the chain (a fence
  guards the receiver, not the checkpointer).
"""

from __future__ import annotations

from pathlib import Path

from labkit.bench import server
from labkit.bench.errors import (
    MAX_TIMEOUT,
    check_choice,
    check_folder,
    check_int,
    check_number,
)
from labkit.bench.failures import FAILED, error_fields, failing_run, first_failure
from labkit.bench.failures import failure as failure_of
from labkit.bench.folders import check_run_dir, keep_json, new_run_dir
from labkit.bench.launcher import WorkerProcess, WorkerReport, read_report
from labkit.bench.ledger import read_ledger
from labkit.bench.snapshot import take_snapshot
from labkit.bench.trace import Trace
from labkit.language import Messages
from labkit.studies.leases.experiment import Freeze
from labkit.studies.leases.outcome import classify, race_counts
from labkit.studies.leases.spec import MAX_MS
from labkit.studies.leases.stores import FILES, LOCK_POINT, create_files, set_clock

__all__ = ["GRAPH_CASES", "forks", "run_graph_race", "run_here"]

# The four cases, each with its meaning in the reader's language (leases.toml)
GRAPH_CASES = Messages("leases.graph_cases", ("race", "locked", "claimed", "stalled"))
ENTRY = "labkit.studies.leases.graph:"
LOCK_TIMEOUT = 0.3  # seconds the second resumer waits for the lock: study 004's value
RESUMERS = ("r1", "r2")
PREFIX = "leases-graph-"


def graph_worker(run_dir: Path, role: str, entry: str, job: dict, **plan) -> WorkerProcess:
    return WorkerProcess(run_dir, role, ENTRY + entry, job, start_mode="fork", **plan)


def forks(checkpoints: list[dict]) -> list[str]:
    """Checkpoints with more than one child: where the thread's chain forked."""
    children: dict[str, int] = {}
    for checkpoint in checkpoints:
        if checkpoint["parent"]:
            children[checkpoint["parent"]] = children.get(checkpoint["parent"], 0) + 1
    return [parent for parent, count in children.items() if count > 1]


class GraphRace:
    """The two resumers of one case and their schedule; close it to reap them."""

    def __init__(self, case: str, run_dir: Path, lease_ms: int, timeout: float) -> None:
        self.case, self.run_dir, self.lease_ms = case, run_dir, lease_ms
        self.lab = Trace(run_dir, "lab")
        job = {
            "claim": case in ("claimed", "stalled"),
            "fenced": case in ("claimed", "stalled"),
            "lease_ms": lease_ms,
            "lock_timeout": LOCK_TIMEOUT,
        }
        # r1 stops where the case needs it: in `review`, the interrupted checkpoint loaded (race,
        # stalled), inside a checkpoint write (locked), or just after its claim (claimed)
        first_stop = {"locked": LOCK_POINT, "claimed": "claimed"}.get(case, "reviewed")
        second_stop = ("reviewed",) if case == "race" else ()
        self.first = graph_worker(
            run_dir,
            "r1",
            "resume_process",
            {**job, "hold_lock": case == "locked"},
            pause_at=(first_stop,),
            timeout=timeout,
        )
        self.frozen: Freeze | None = None
        self.second = graph_worker(
            run_dir,
            "r2",
            "resume_process",
            {**job, "hold_lock": False},
            pause_at=second_stop,
            timeout=timeout,
        )

    def run(self) -> None:
        self.first.start()
        self.first.wait_for_pause()
        if self.case == "race":  # both have loaded the interrupted checkpoint: let both go
            self.second.start()
            self.second.wait_for_pause()
            self.first.resume()
            self.first.wait()
            self.second.resume()
            self.second.wait()
            return
        if self.case in ("locked", "stalled"):
            self.frozen = Freeze(self.first, self.lab, 0)
        self.first.resume()  # read at once, or once it is thawed
        if self.case == "stalled":
            set_clock(str(self.run_dir), self.lease_ms)
            self.lab.event("clock", lab_ms=self.lease_ms)
        self.second.start()
        self.second.wait()
        if self.frozen:
            self.frozen.thaw(self.lease_ms if self.case == "stalled" else 0)
        self.first.wait()

    def close(self) -> None:
        if self.frozen:
            self.frozen.release()
        self.first.close()
        self.second.close()
        self.lab.close()


def describe(run_dir: Path, timeout: float) -> dict:
    """The checkpoints, decoded in a forked worker (LangGraph's own API, each with its parent)."""
    with graph_worker(run_dir, "describe", "describe", {}, timeout=timeout) as describer:
        describer.wait()
    return read_report(run_dir, "describe")


def run_here(case: str, lease_ms: int, timeout: float, out: str | None = None) -> dict:
    """In the trial server: the thread to its interrupt, then the case's two resumers; the
    figures as a dict (what each resumer ran, the ledger, the decoded checkpoints and where
    they fork, the receiver's rows, the outcome)."""
    run_dir = new_run_dir(check_folder("out", out), prefix=f"{PREFIX}{case}-")
    with failing_run(run_dir):
        create_files(str(run_dir))
        first = graph_worker(run_dir, "first", "first_process", {"fenced": False}, timeout=timeout)
        with first:
            first.wait()
        race = GraphRace(case, run_dir, lease_ms, timeout)
        try:
            race.run()
        finally:
            race.close()
        workers: dict[str, WorkerReport] = {
            "first": first.report(),
            "r1": race.first.report(),
            "r2": race.second.report(),
        }
        history = describe(run_dir, timeout)
        after = take_snapshot(run_dir, FILES)
        locked = case == "locked"
        plans = [(w, None) for role, w in workers.items() if not (locked and role == "r2")]
        failure = first_failure(plans)
        if locked and workers["r2"].exit_code == 0 and not failure:
            failure = failure_of("not_stopped_by_lock", "r2")
        result = {
            "case": case,
            "lease_ms": lease_ms,
            "resumers": {
                role: {
                    **read_report(run_dir, role),
                    "exit": workers[role].exit_code,
                    "error": None
                    if workers[role].exit_code == 0
                    else error_fields(workers[role].stderr),
                }
                for role in RESUMERS
            },
            "publish_runs": [
                {k: line[k] for k in ("role", "fence", "applied")} for line in read_ledger(run_dir)
            ],
            "checkpoints": history.get("checkpoints", []),
            "forks": forks(history.get("checkpoints", [])),
            **race_counts(after),
            "outcome": FAILED if failure else classify(after),
            "failure": failure,
            "run_dir": str(run_dir),
        }
        keep_json(run_dir, results=result)
    return result


def run_graph_race(
    case: str = "race",
    lease_ms: int = 200,
    out: Path | str | None = None,
    timeout: float = 20.0,
) -> dict:
    """Two processes resume one LangGraph thread from one SqliteSaver file (see GRAPH_CASES):
    what each ran, the decoded checkpoints and where the chain forks, the receiver's rows."""
    check_choice("graph case", case, GRAPH_CASES)
    check_int("lease_ms", lease_ms, 1, MAX_MS)
    check_number("timeout", timeout, 0, MAX_TIMEOUT)
    where = check_folder("out", out)
    check_run_dir(where, PREFIX)  # a folder that exists: refused before the server starts
    return server.call(
        "labkit.studies.leases.resume:run_here",
        case=case,
        lease_ms=lease_ms,
        timeout=timeout,
        out=None if where is None else str(where),
    )
