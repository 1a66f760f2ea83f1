"""Step mode for lesson 6: the race's schedule one move at a time (w1 has claimed: freeze it;
the clock moves and w2 arrives; w1 is thawed), with both files read live between the moves.
At any stop the frozen worker can be killed instead (SIGKILL ends a stopped process too): the
rest of the schedule then runs without it. The rules of step mode: `labkit.bench.stepping`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from labkit.bench.errors import check_folder
from labkit.bench.folders import new_run_dir
from labkit.bench.launcher import WorkerReport
from labkit.bench.snapshot import Snapshot, take_snapshot
from labkit.bench.stepping import PausedWorker
from labkit.studies.leases.experiment import ClaimResult, Move, Race
from labkit.studies.leases.spec import ClaimSpec
from labkit.studies.leases.stores import FILES

__all__ = ["ClaimStepSession"]


class ClaimStepSession(PausedWorker):
    """One race, paused before each move of its schedule (`paused_at` is the move, a code and
    its numbers: `labkit.views.leases_words.move_words` says it). Close it (or use `with`) to
    reap both workers."""

    who = "first worker"

    @property
    def killed(self) -> str:
        return "w1"  # the race's name for its first worker, frozen or about to be

    def __init__(
        self,
        method: str = "lease_with_fence",
        pause_ms: int = 300,
        lease_ms: int = 200,
        out: Path | str | None = None,
        timeout: float = 600.0,
    ) -> None:
        self.spec = ClaimSpec(method, pause_ms, lease_ms, check_folder("out", out), timeout)
        super().__init__(new_run_dir(self.spec.out, prefix="leases-step-"))
        try:
            self.race = Race(self.spec, self.run_dir)
            self.worker = self.race.first
            self.moves: Iterator[Move] = iter(self.race.steps())
            self.paused_at = next(self.moves)
        except BaseException:
            self.close()
            raise

    def standing_at(self) -> str:
        """Where w1 stands while the schedule is paused: its stop point (paused_at is the
        next move)."""
        return self.race.stop_at

    def state(self) -> Snapshot:
        """What the task table and the receiver hold right now (a new read-only connection)."""
        return take_snapshot(self.run_dir, FILES)

    def proceed(self) -> Move | None:
        """Make the next move; return the one after it, or None once the schedule is over."""
        self._check_paused("proceed")
        self.paused_at = next(self.moves, None)
        return self.paused_at

    def kill(self) -> str:
        """SIGKILL the first worker where it stands (frozen or not); the rest of the schedule
        runs without it when you recover(). Returns its point: where it stands."""
        self._check_paused("kill")
        self.paused_at = None
        if self.race.frozen:
            self.race.frozen.release()  # its guard must not outlive the pid's owner
        self.worker.kill()
        return self.race.stop_at

    def _recover(self, first: WorkerReport) -> ClaimResult:
        for _move in self.moves:  # what is left of the schedule: w2 arrives, if it has not
            pass
        return self.race.result(first_killed=first.exit_code == -9)

    def close(self) -> None:
        """Kill both workers if they still run and reap them. Safe to call twice."""
        if getattr(self, "race", None) is not None:
            self.race.close()
        super().close()
