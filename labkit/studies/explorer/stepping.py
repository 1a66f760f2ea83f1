"""Step mode for one explored step: replay it with a pause at every crash point, look at the
files there, go on or kill it (SIGKILL) at the point of your choice, then recover once.

The bench's `PausedWorker` holds the rules (when each move is allowed); this session says what
the files are (every table and line of the run folder) and how the explorer recovers and
judges. A graph's workers import LangGraph, which only the trial server's forks do: step mode
is for steps; a graph's failing point is shown by its run folder and timeline.
"""

from __future__ import annotations

from pathlib import Path

from labkit.bench.errors import check_folder, check_instance, refusal
from labkit.bench.folders import new_run_dir
from labkit.bench.launcher import WorkerProcess, WorkerReport, read_report
from labkit.bench.stepping import PausedWorker
from labkit.studies.explorer.record import point_name
from labkit.studies.explorer.replays import ENTRY, run_workers
from labkit.studies.explorer.report import Exploration, PointResult
from labkit.studies.explorer.spec import ExploreSpec
from labkit.studies.explorer.states import read_state
from labkit.studies.explorer.with_files import check_apart, copy_in

__all__ = ["ExplorerStepSession"]


class ExplorerStepSession(PausedWorker):
    """One replay of an explored step, paused at each crash point in turn."""

    def __init__(self, exploration: Exploration, out: Path | str | None = None) -> None:
        check_instance("exploration", exploration, Exploration, "exploration")
        if exploration.kind != "step":
            raise refusal("explore_step_mode")
        self.spec = ExploreSpec(**exploration.spec)
        out = check_folder("out", out)
        check_apart(self.spec.with_files, out)
        super().__init__(new_run_dir(out, "explore-step-"))
        copy_in(self.run_dir, self.spec.with_files)
        self.points = [p for p in exploration.points if p.n is not None]
        names = [point_name(p.n) for p in self.points]
        self.job = self.spec.replay_job(*exploration.truth, point=None)
        self.begin(
            WorkerProcess(self.run_dir, "first", ENTRY, self.job, pause_at=names, timeout=600.0)
        )

    @property
    def point(self) -> PointResult | None:
        """The crash point the worker is paused at (its row of the matrix), if it is."""
        return next((p for p in self.points if point_name(p.n) == self.paused_at), None)

    def run_to(self, n: int) -> None:
        """Go on to crash point `n` (pausing nowhere before it)."""
        if n not in {p.n for p in self.points}:
            raise refusal("explore_no_point", n=n, last=len(self.points))
        while not self.finished and self.point.n < n:
            self.proceed()

    def state(self) -> dict:
        """What the run folder holds now: every table and every line."""
        return read_state(str(self.run_dir))

    def _recover(self, first: WorkerReport) -> dict:
        """A fresh worker recovers and the checker judges what it left (the report of it)."""
        killed = next((p for p in self.points if point_name(p.n) == first.killed_at), None)
        point = {"n": killed.n, "op": killed.op, "detail": killed.detail} if killed else None
        job = {**self.job, "point": point}
        recovery = run_workers({0: self.run_dir}, "recovery", {0: job}, self.spec, "fresh")[0]
        return {**read_report(self.run_dir, "recovery"), "exit_code": recovery.exit_code}
