"""One crash-and-recover run: the first worker dies at the kill point, a fresh one recovers.

Everything a run writes stays in its own new folder: the SQLite files, each worker's stdout
and stderr, the trace, the snapshots before and after recovery, and `results.json`.

A worker that fails (its own error, a timeout) makes the run "failed", with the reason. If the
parent itself cannot go on (a full disk, most often), the run raises RunFailed, one line, and
its results.json says "failed" if it can still be written: nothing claims an outcome.
"""

from __future__ import annotations

import platform
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from labkit.bench.errors import RunFailed, check_folder, check_instance
from labkit.bench.failures import failing_run, first_failure
from labkit.bench.folders import holds_run_dirs, keep_json, new_run_dir
from labkit.bench.launcher import WorkerProcess, WorkerReport
from labkit.bench.snapshot import Snapshot, take_snapshot
from labkit.bench.trace import Trace
from labkit.studies.commit_window.orders import NO_KILL
from labkit.studies.commit_window.outcome import classify
from labkit.studies.commit_window.spec import RunSpec
from labkit.studies.commit_window.stores import create_files

__all__ = [
    "RunFailed",
    "RunResult",
    "execute",
    "failing_run",
    "order_worker",
    "prepare_run",
    "recover",
    "run",
]


@dataclass
class RunResult:
    spec: RunSpec
    run_dir: Path
    first: WorkerReport
    before: Snapshot
    recovery: WorkerReport
    after: Snapshot
    outcome: str
    failure: dict | None = None  # which worker did not do what was planned, and why

    def summary(self) -> dict:
        """The run in the few numbers study 000's table shows."""
        return {
            "order": self.spec.order,
            "kill_at": self.spec.kill_at,
            "kill_mode": self.spec.kill_mode,
            "before": self.before.counts(),
            "after": self.after.counts(),
            "first_exit": self.first.exit_code,
            "replay_exit": self.recovery.exit_code,
            "outcome": self.outcome,
            "failure": self.failure,
            "timed_out": [w.role for w in (self.first, self.recovery) if w.timed_out],
            "run_dir": str(self.run_dir),
        }

    def to_json(self) -> dict:
        """Everything about the run, as results.json keeps it."""
        return {
            **self.summary(),
            "first": self.first.to_json(),
            "recovery": self.recovery.to_json(),
            "snapshots": {"before": self.before.to_json(), "after": self.after.to_json()},
            "versions": {"python": platform.python_version(), "sqlite": sqlite3.sqlite_version},
        }


def note_created_files(run_dir: Path, created: Snapshot) -> None:
    """Start the trace with the rows the files hold before any worker runs."""
    trace = Trace(run_dir, "setup")
    trace.event("created", rows=created.rows)
    trace.close()


def order_worker(spec: RunSpec, run_dir: Path, role: str, **plan: object) -> WorkerProcess:
    """A worker process of its own (`served`: forked from a server) that does the spec's write
    order once."""
    order = spec.write_order
    job = {"order": order.name, "files": list(order.files)}
    if spec.step_source is not None:
        job.update(step_source=spec.step_source, step_name=spec.step_name)
    return WorkerProcess(
        run_dir,
        role,
        "labkit.studies.commit_window.worker:run_step",
        job,
        timeout=spec.timeout,
        start_mode="served",
        **plan,
    )


def first_worker(spec: RunSpec, run_dir: Path) -> WorkerReport:
    """Run the step with the planned crash: the worker exits itself, or the parent SIGKILLs it."""
    crash = spec.kill_at != NO_KILL
    exit_at = spec.kill_at if crash and spec.kill_mode == "exit" else None
    pause_at = (spec.kill_at,) if crash and spec.kill_mode == "sigkill" else ()
    worker = order_worker(spec, run_dir, "first", exit_at=exit_at, pause_at=pause_at)
    with worker:
        worker.finish(kill_at=spec.kill_at if pause_at else None)
    return worker.report()


def recovery_worker(spec: RunSpec, run_dir: Path) -> WorkerReport:
    """A fresh process with no crash planned: it reads the checkpoint and does what is left."""
    worker = order_worker(spec, run_dir, "recovery")
    with worker:
        worker.wait()
    return worker.report()


def prepare_run(spec: RunSpec) -> Path:
    """A new run folder with fresh files, and the trace's first event: what they hold."""
    run_dir = new_run_dir(spec.out)
    order = spec.write_order
    with failing_run(run_dir):
        create_files(run_dir, order.files, order.receiver_dedupes)
        note_created_files(run_dir, take_snapshot(run_dir, order.files))
    return run_dir


def recover(spec: RunSpec, run_dir: Path, first: WorkerReport) -> RunResult:
    """After the first worker: snapshot, recover in a fresh process, snapshot, classify, save.

    The outcome is "failed" if a worker did not do what was planned (see `worker_failure`)."""
    files = spec.write_order.files
    planned_kill = None if spec.kill_at == NO_KILL else spec.kill_at
    with failing_run(run_dir):
        before = take_snapshot(run_dir, files)
        recovery = recovery_worker(spec, run_dir)
        after = take_snapshot(run_dir, files)
        failure = first_failure([(first, planned_kill), (recovery, None)])
        outcome = classify(after, failure)
        result = RunResult(spec, run_dir, first, before, recovery, after, outcome, failure)
        keep_json(run_dir, before=before.to_json(), after=after.to_json(), results=result.to_json())
    return result


@holds_run_dirs
def execute(spec: RunSpec) -> RunResult:
    """Run the spec from fresh files to a classified outcome, and keep it all in the run folder."""
    check_instance("spec", spec, RunSpec, "run_spec")
    run_dir = prepare_run(spec)
    with failing_run(run_dir):
        first = first_worker(spec, run_dir)
    return recover(spec, run_dir, first)


def run(
    order: str,
    kill_at: str = NO_KILL,
    kill_mode: str = "exit",
    out: Path | str | None = None,
    timeout: float = 10.0,
) -> RunResult:
    """Crash `order` at `kill_at`, recover, classify: run("effect_first", "effect") → duplicate."""
    return execute(RunSpec(order, kill_at, kill_mode, check_folder("out", out), timeout))
