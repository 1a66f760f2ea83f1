"""Instructor step mode: the worker stops at every kill point and waits for a decision.

At each stop the files can be read live (a new read-only connection, as always); then the
worker either goes on to its next point or is killed there with SIGKILL, and a fresh process
recovers. The notebook panel and `labkit step` both drive this one class.
"""

from __future__ import annotations

from pathlib import Path

from labkit.bench.errors import LabError, check_folder
from labkit.bench.folders import release_run_dir
from labkit.bench.snapshot import Snapshot, take_snapshot
from labkit.studies.commit_window.orders import NO_KILL, get_order
from labkit.studies.commit_window.runs import RunResult, order_worker, prepare_run, recover
from labkit.studies.commit_window.spec import RunSpec

__all__ = ["StepSession"]


class StepSession:
    """One first worker, paused at each kill point in turn. Close it (or use `with`) to reap."""

    def __init__(self, order: str, out: Path | str | None = None, timeout: float = 600.0) -> None:
        self.order = get_order(order)
        self.spec = RunSpec(order, out=check_folder("out", out), timeout=timeout)
        self.run_dir = prepare_run(self.spec)
        self.worker = order_worker(
            self.spec, self.run_dir, "first", pause_at=self.order.kill_points
        )
        self.worker.start()
        self.paused_at: str | None = self.worker.wait_for_pause()
        self.result: RunResult | None = None
        self.closed = False

    @property
    def finished(self) -> bool:
        """The first worker is gone: it ran to the end or was killed."""
        return self.paused_at is None

    def state(self) -> Snapshot:
        """What the files hold right now, read through a new read-only connection."""
        return take_snapshot(self.run_dir, self.order.files)

    def proceed(self) -> str | None:
        """Let the worker run to its next kill point; return it, or None once it has finished."""
        self._check_paused("proceed")
        self.worker.resume()
        self.paused_at = self.worker.wait_for_pause()
        if self.paused_at is None:
            self.worker.wait()
        return self.paused_at

    def kill(self) -> str:
        """SIGKILL the worker where it stands; return the point it died at."""
        self._check_paused("kill")
        point = self.paused_at
        self.worker.kill()
        self.paused_at = None
        return point

    def recover(self) -> RunResult:
        """Run the recovery worker in a fresh process and classify what is left (once)."""
        self._check_open("recover")
        if self.result is not None:
            raise LabError("this session has recovered already: session.result holds the outcome")
        if not self.finished:
            raise LabError(
                f"cannot recover: the worker is still paused at {self.paused_at!r}; "
                "kill() it there or proceed() to its end first"
            )
        killed_at = self.worker.killed_at or NO_KILL
        self.spec = RunSpec(self.order.name, killed_at, "sigkill", self.spec.out, self.spec.timeout)
        self.worker.close()
        self.result = recover(self.spec, self.run_dir, self.worker.report())
        return self.result

    def close(self) -> None:
        """Kill the worker if it still runs and reap it. Safe to call twice."""
        self.worker.close()
        self.closed = True
        release_run_dir(self.run_dir)  # the run is over: `clean` may remove its folder

    def _check_open(self, action: str) -> None:
        if self.closed:
            raise LabError(f"cannot {action}: this step session is closed")

    def _check_paused(self, action: str) -> None:
        """Only a paused worker can go on or be killed: one line otherwise, never a dead pipe."""
        self._check_open(action)
        if self.finished:
            ended = f"was killed at {self.worker.killed_at!r}" if self.worker.killed_at else "ended"
            then = "see session.result" if self.result else "recover() comes next"
            raise LabError(f"cannot {action}: the worker {ended}; {then}")

    def __enter__(self) -> StepSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
