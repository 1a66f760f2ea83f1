"""The gate: where a worker meets its kill plan, and how it leaves its report for the parent.

Every worker of every study calls its gate at each kill point. The gate passes, ends the
process right there (`os._exit(91)`: no cleanup at all, as study 000 does), or stops and asks
the parent, which answers "continue" or sends SIGKILL. Worker-side: standard library only.
"""

from __future__ import annotations

import json
import os
import re

from labkit.bench.trace import Trace

__all__ = ["EXIT_CODE", "Gate", "report", "same_point"]

EXIT_CODE = 91  # study 000's deliberate exit status
OPEN = open  # bound before any watch: the report is the lab's, never a point (`Watches`)
WRITE_POINT = re.compile(r"(after write \d+) \(.*\)")  # `Gate.after_write`'s name for a point


def same_point(point: str, planned: str | None) -> bool:
    """`point` is the `planned` one: the same name, or the same write (by its number) of a
    file whose name may change from run to run: a temporary file, written and then renamed
    over the real one, is called something new in every run ("after write 1 (tmpk3j_2x)")."""
    if point == planned:
        return True
    write, planned_write = WRITE_POINT.fullmatch(point), WRITE_POINT.fullmatch(planned or "")
    return bool(write and planned_write and write[1] == planned_write[1])


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

    def after_write(self, file: str) -> None:
        """A kill point after a write to another file of the run folder (a reader's code has
        one after each: `explorer.readers_writes`), the same whatever the file is called."""
        self.writes = getattr(self, "writes", 0) + 1
        self(f"after write {self.writes} ({file})")

    def __call__(self, point: str) -> None:
        self.trace.note("point", point=point)  # written: a kill cannot take it back
        if same_point(point, self.exit_at):
            self.trace.event("kill", point=point, mode="exit", code=EXIT_CODE)
            os._exit(EXIT_CODE)  # no finally, no close: the files stay as they are right now
        planned = next((p for p in self.pause_at if same_point(point, p)), None)
        if planned is not None:  # told by the name the parent planned it under
            os.write(self.notify_fd, f"{planned}\n".encode())
            if not os.read(self.resume_fd, 64):  # the parent went away without an answer
                os._exit(2)


def report(job: dict, **fields: object) -> None:
    """Leave what this worker saw in `<role>.json` for the parent (`launcher.read_report`)."""
    with OPEN(os.path.join(job["run_dir"], f"{job['role']}.json"), "w") as out:
        out.write(json.dumps(fields))
