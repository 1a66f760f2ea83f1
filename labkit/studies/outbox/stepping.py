"""Step mode for the outbox: the producer, then the relay, stop at every boundary they pass.

At each stop the files can be read (a new read-only connection); then the process goes on to
its next boundary or is killed there with SIGKILL, and a fresh relay recovers. The consumer's
own boundary (its commit, before it answers) lies inside a delivery: step mode shows the files
after it at the relay's `after_deliver`; `run_outbox(kill_at="consumer_committed")` kills there.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from labkit.bench.errors import check_folder, refusal
from labkit.bench.folders import release_run_dir
from labkit.bench.launcher import WorkerProcess, WorkerReport
from labkit.bench.snapshot import Snapshot, take_snapshot
from labkit.studies.outbox.experiment import (
    OutboxResult,
    OutboxSpec,
    conclude,
    prepare_outbox,
    stage_worker,
)
from labkit.studies.outbox.stores import FILES

__all__ = ["STOPS", "OutboxStepSession"]

STOPS = {  # each stage's boundaries, in the order it passes them
    "producer": ("in_transaction", "committed"),
    "relay": ("before_deliver", "after_deliver", "after_mark"),
}


class OutboxStepSession:
    """The producer, then the relay, paused at each boundary. Close it (or use `with`) to reap."""

    def __init__(
        self, consumer: str = "plain", out: Path | str | None = None, timeout: float = 600.0
    ) -> None:
        self.spec = OutboxSpec(consumer, out=check_folder("out", out), timeout=timeout)
        self.run_dir = prepare_outbox(self.spec)
        self.reports: dict[str, WorkerReport] = {}
        self.result: OutboxResult | None = None
        self.closed = False
        self.stage = "producer"
        self.paused_at: str | None = None
        self.worker: WorkerProcess | None = None
        self._start("producer")

    @property
    def killed(self) -> str:
        """The process a kill reaches now, as a code ("cli.who.<code>"): the paused stage."""
        return self.stage

    @property
    def finished(self) -> bool:
        """Both processes are gone, or the one that was killed is."""
        return self.paused_at is None

    def state(self) -> Snapshot:
        """What the files hold right now, read through a new read-only connection."""
        return take_snapshot(self.run_dir, FILES)

    def proceed(self) -> str | None:
        """Let the process go on to its next boundary (after the producer's last, the relay
        starts); return the boundary, or None once the relay has finished."""
        self._check_paused("proceed")
        self.worker.resume()
        self.paused_at = self.worker.wait_for_pause()
        if self.paused_at is None:
            self._end_stage()
        return self.paused_at

    def kill(self) -> str:
        """SIGKILL the paused process where it stands; return the boundary it died at."""
        self._check_paused("kill")
        point = self.paused_at
        self.worker.kill()
        self.spec = replace(self.spec, kill_at=point)  # the run is now the run killed there
        self._end_stage()
        return point

    def recover(self) -> OutboxResult:
        """A fresh relay delivers what is unsent; the outcome is read from the files (once)."""
        if self.closed:
            raise refusal("session_closed", action="recover")
        if self.result is not None:
            raise refusal("recovered_already")
        if not self.finished:
            raise refusal("stage_paused", who=self.stage, point=self.paused_at)
        self.result = conclude(self.spec, self.run_dir, self.reports)
        return self.result

    def close(self) -> None:
        """Kill the paused process if there is one and reap it. Safe to call twice."""
        if self.worker is not None:
            self.worker.close()
        self.closed = True
        release_run_dir(self.run_dir)

    def _start(self, stage: str) -> None:
        self.stage = stage
        self.worker = stage_worker(self.spec, self.run_dir, stage, pause_at=STOPS[stage]).start()
        self.paused_at = self.worker.wait_for_pause()
        if self.paused_at is None:
            self._end_stage()

    def _end_stage(self) -> None:
        """The stage's process is gone: reap it; after a producer that was not killed, the
        relay starts."""
        self.worker.wait()
        self.worker.close()
        self.reports[self.stage] = self.worker.report()
        self.paused_at = None
        if self.stage == "producer" and self.worker.killed_at is None:
            self._start("relay")

    def _check_paused(self, action: str) -> None:
        if self.closed:
            raise refusal("session_closed", action=action)
        if self.finished:
            raise refusal("nothing_paused", action=action)

    def __enter__(self) -> OutboxStepSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
