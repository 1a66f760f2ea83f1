"""Step mode for lesson 5: the first caller stops at each of its points (intent saved, request
sent, answer read) while the ticket service runs; at each stop both sides can be read live,
then the caller goes on or is killed there with SIGKILL, and a fresh caller recovers (the rules
of step mode: `labkit.bench.stepping`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from labkit.bench.errors import MAX_TIMEOUT, check_folder, check_number
from labkit.bench.folders import new_run_dir
from labkit.bench.launcher import WorkerReport
from labkit.bench.snapshot import Snapshot, read_tables
from labkit.bench.stepping import PausedWorker
from labkit.studies.unknown_outcome.caller import CALLER_FILE, CALLER_POINTS
from labkit.studies.unknown_outcome.experiment import SERVICE_DIR, CallLab, CallResult
from labkit.studies.unknown_outcome.spec import CallSpec

__all__ = ["CallStepSession"]


class CallStepSession(PausedWorker):
    """One first caller, paused at each point in turn. Close it (or use `with`) to reap the
    caller and the service."""

    who = "caller"

    def __init__(
        self,
        strategy: str = "reconcile",
        fault: str = "none",
        out: Path | str | None = None,
        timeout: float = 600.0,
    ) -> None:
        self.spec = CallSpec(strategy, fault, out=check_folder("out", out))
        timeout = check_number("timeout", timeout, 0, MAX_TIMEOUT)  # the caller's, paused
        super().__init__(new_run_dir(self.spec.out, prefix="unknown-outcome-step-"))
        self.spec = replace(self.spec, out=self.run_dir)
        self.lab = CallLab(self.run_dir / SERVICE_DIR)
        try:
            self.lab.service.start()
            plan = {"pause_at": CALLER_POINTS, "timeout": timeout}
            self.begin(self.lab.first_caller(self.spec, self.run_dir, **plan))
        except BaseException:
            self.close()
            raise

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

    def _recover(self, first: WorkerReport) -> CallResult:
        return self.lab.recover(self.spec, self.run_dir, first)

    def close(self) -> None:
        """Kill the caller and the service if they still run and reap them. Safe twice."""
        super().close()
        self.lab.service.close()
