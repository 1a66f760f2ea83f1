"""Step mode for lesson 5: the first caller stops at each of its points (intent saved, request
sent, answer read) while the ticket service runs; at each stop both sides can be read live,
then the caller goes on or is killed there with SIGKILL, and a fresh caller recovers."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from labkit.bench.errors import LabError, check_folder
from labkit.bench.folders import new_run_dir, release_run_dir
from labkit.bench.snapshot import Snapshot, read_tables
from labkit.studies.unknown_outcome.caller import CALLER_FILE, CALLER_POINTS
from labkit.studies.unknown_outcome.experiment import SERVICE_DIR, CallLab, CallResult
from labkit.studies.unknown_outcome.spec import CallSpec

__all__ = ["CallStepSession"]


class CallStepSession:
    """One first caller, paused at each point in turn. Close it (or use `with`) to reap the
    caller and the service."""

    def __init__(
        self,
        strategy: str = "reconcile",
        fault: str = "none",
        out: Path | str | None = None,
        timeout: float = 600.0,
    ) -> None:
        self.spec = CallSpec(strategy, fault, out=check_folder("out", out))
        self.run_dir = new_run_dir(self.spec.out, prefix="unknown-outcome-step-")
        self.spec = replace(self.spec, out=self.run_dir)
        self.lab = CallLab(self.run_dir / SERVICE_DIR)
        self.result: CallResult | None = None
        self.closed = False
        try:
            self.lab.service.start()
            self.worker = self.lab.first_caller(
                self.spec, self.run_dir, pause_at=CALLER_POINTS, timeout=timeout
            )
            self.worker.start()
            self.paused_at: str | None = self.worker.wait_for_pause()
        except BaseException:
            self.close()
            raise

    @property
    def finished(self) -> bool:
        """The first caller is gone: it ran to its end or was killed."""
        return self.paused_at is None

    def state(self) -> Snapshot:
        """What both sides hold right now: the caller's checkpoint and the service's tickets."""
        caller = self.run_dir / CALLER_FILE
        return Snapshot(
            {
                CALLER_FILE: read_tables(caller) if caller.exists() else {},
                f"{SERVICE_DIR}/tickets.db": {
                    "ticket": self.lab.service.ticket_table(self.spec.label)
                },
            }
        )

    def proceed(self) -> str | None:
        """Let the caller run to its next point; return it, or None once it has finished."""
        self._check_paused("proceed")
        self.worker.resume()
        self.paused_at = self.worker.wait_for_pause()
        if self.paused_at is None:
            self.worker.wait()
        return self.paused_at

    def kill(self) -> str:
        """SIGKILL the caller where it stands; return the point it died at."""
        self._check_paused("kill")
        point = self.paused_at
        self.worker.kill()
        self.paused_at = None
        return point

    def recover(self) -> CallResult:
        """Recover in a fresh caller and classify what both sides hold (once)."""
        if self.closed:
            raise LabError("cannot recover: this step session is closed")
        if self.result is not None:
            raise LabError("this session has recovered already: session.result holds the outcome")
        if not self.finished:
            raise LabError(
                f"cannot recover: the caller is still paused at {self.paused_at!r}; "
                "kill() it there or proceed() to its end first"
            )
        self.worker.close()
        self.result = self.lab.recover(self.spec, self.run_dir, self.worker.report())
        return self.result

    def close(self) -> None:
        """Kill the caller and the service if they still run and reap them. Safe twice."""
        if getattr(self, "worker", None) is not None:
            self.worker.close()
        self.lab.service.close()
        self.closed = True
        release_run_dir(self.run_dir)

    def _check_paused(self, action: str) -> None:
        if self.closed:
            raise LabError(f"cannot {action}: this step session is closed")
        if self.finished:
            ended = f"was killed at {self.worker.killed_at!r}" if self.worker.killed_at else "ended"
            raise LabError(f"cannot {action}: the caller {ended}; recover() comes next")

    def __enter__(self) -> CallStepSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
