"""Step mode, whatever the study: one worker paused at each of its points in turn.

At each stop the reader looks at the files (a new read-only connection, as always); then the
worker goes on to its next point or is killed there with SIGKILL, and, once it has ended, a
fresh process recovers, once. A study's session says what "the files" are (`state`) and how
it recovers (`_recover`); the rules of when each step is allowed live here, so every step mode
refuses a step out of turn with the same one line, never a dead pipe.
"""

from __future__ import annotations

from pathlib import Path

from labkit.bench.errors import refusal
from labkit.bench.folders import release_run_dir
from labkit.bench.launcher import WorkerProcess

__all__ = ["PausedWorker"]


class PausedWorker:
    """A worker that stops at each of its points. Close it (or use `with`) to reap it."""

    who = "worker"  # what the one-line refusals call it: "the caller", "the worker"

    @property
    def killed(self) -> str:
        """The process a kill reaches, as a code the command line names in the reader's
        language ("cli.who.<code>"): "worker", "caller", "w1"."""
        return self.who

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.worker: WorkerProcess | None = None
        self.paused_at: str | None = None
        self.result: object | None = None
        self.closed = False

    def begin(self, worker: WorkerProcess) -> None:
        """Start `worker` (planned to pause at its points) and wait for its first stop."""
        self.worker = worker
        worker.start()
        self.paused_at = worker.wait_for_pause()

    @property
    def finished(self) -> bool:
        """The worker is gone: it ran to its end or was killed."""
        return self.paused_at is None

    def proceed(self) -> str | None:
        """Let the worker run to its next point; return it, or None once it has finished."""
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

    def recover(self) -> object:
        """Recover in a fresh process and classify what is left (once)."""
        self._check_open("recover")
        if self.result is not None:
            raise refusal("recovered_already")
        if not self.finished:
            raise refusal("still_paused", who=self.who, point=self.standing_at())
        self.worker.close()
        self.result = self._recover(self.worker.report())
        return self.result

    def standing_at(self) -> str:
        """The point the paused worker stands at, as a refusal names it."""
        return str(self.paused_at)

    def _recover(self, first: object) -> object:
        """The study's recovery, given the ended worker's report."""
        raise NotImplementedError

    def close(self) -> None:
        """Kill the worker if it still runs and reap it. Safe to call twice."""
        if self.worker is not None:
            self.worker.close()
        self.closed = True
        release_run_dir(self.run_dir)  # the run is over: `clean` may remove its folder

    def _check_open(self, action: str) -> None:
        if self.closed:
            raise refusal("session_closed", action=action)

    def _check_paused(self, action: str) -> None:
        """Only a paused worker can go on or be killed: one line otherwise, never a dead pipe."""
        self._check_open(action)
        if self.finished:
            killed = self.worker.killed_at
            if killed:
                code = "killed_recovered" if self.result else "killed_to_recover"
            else:
                code = "ended_recovered" if self.result else "ended_to_recover"
            raise refusal(code, action=action, who=self.who, point=killed)

    def __enter__(self) -> PausedWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
