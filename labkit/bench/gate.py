"""The gate: where a worker meets its kill plan, and how it leaves its report for the parent.

Every worker of every study calls its gate at each kill point. The gate passes, ends the
process right there (`os._exit(91)`: no cleanup at all, as study 000 does), or stops and asks
the parent, which answers "continue" or sends SIGKILL. Worker-side: standard library only.
"""

from __future__ import annotations

import json
import os

from labkit.bench.trace import Trace

__all__ = ["EXIT_CODE", "Gate", "report"]

EXIT_CODE = 91  # study 000's deliberate exit status


class Gate:
    """Where a kill point meets the run's plan: pass, exit here, or pause for the parent."""

    def __init__(self, trace: Trace, job: dict) -> None:
        self.trace = trace
        self.exit_at = job.get("exit_at")
        self.pause_at = set(job.get("pause_at", ()))
        self.notify_fd = job.get("notify_fd")
        self.resume_fd = job.get("resume_fd")

    def after_commit(self, file: str) -> None:
        """A kill point after a commit (a reader's step has one after each: `CommitWatch`)."""
        self.commits = getattr(self, "commits", 0) + 1
        self(f"after commit {self.commits} ({file})")

    def __call__(self, point: str) -> None:
        self.trace.note("point", point=point)  # written: a kill cannot take it back
        if point == self.exit_at:
            self.trace.event("kill", point=point, mode="exit", code=EXIT_CODE)
            os._exit(EXIT_CODE)  # no finally, no close: the files stay as they are right now
        if point in self.pause_at:
            os.write(self.notify_fd, f"{point}\n".encode())
            if not os.read(self.resume_fd, 64):  # the parent went away without an answer
                os._exit(2)


def report(job: dict, **fields: object) -> None:
    """Leave what this worker saw in `<role>.json` for the parent (`launcher.read_report`)."""
    with open(os.path.join(job["run_dir"], f"{job['role']}.json"), "w") as out:
        out.write(json.dumps(fields))
