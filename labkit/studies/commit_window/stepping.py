"""Instructor step mode for study 000: the worker stops at every kill point and waits for a
decision (the rules of step mode: `labkit.bench.stepping`). At each stop both files can be
read live; the notebook panel and `labkit step` both drive this one class.
"""

from __future__ import annotations

from pathlib import Path

from labkit.bench.errors import check_folder
from labkit.bench.launcher import WorkerReport
from labkit.bench.snapshot import Snapshot, take_snapshot
from labkit.bench.stepping import PausedWorker
from labkit.studies.commit_window.orders import NO_KILL, get_order
from labkit.studies.commit_window.runs import RunResult, order_worker, prepare_run, recover
from labkit.studies.commit_window.spec import RunSpec

__all__ = ["StepSession"]


class StepSession(PausedWorker):
    """One first worker, paused at each kill point in turn. Close it (or use `with`) to reap."""

    def __init__(self, order: str, out: Path | str | None = None, timeout: float = 600.0) -> None:
        self.order = get_order(order)
        self.spec = RunSpec(order, out=check_folder("out", out), timeout=timeout)
        super().__init__(prepare_run(self.spec))
        self.begin(order_worker(self.spec, self.run_dir, "first", pause_at=self.order.kill_points))

    def state(self) -> Snapshot:
        """What the files hold right now, read through a new read-only connection."""
        return take_snapshot(self.run_dir, self.order.files)

    def _recover(self, first: WorkerReport) -> RunResult:
        """A fresh process recovers; the run is classified as killed where the worker died."""
        killed_at = self.worker.killed_at or NO_KILL
        self.spec = RunSpec(self.order.name, killed_at, "sigkill", self.spec.out, self.spec.timeout)
        return recover(self.spec, self.run_dir, first)
