"""Study 000's point about `os._exit`: it ends the process where it stands, so a `finally`
block (a connection's close, a log's last line) never runs; `sys.exit` raises SystemExit,
which unwinds the stack and runs them. Two real workers, one each way, each writing a line
before its exit and another in its `finally`; the parent reads back which lines are there.
Worker-side: `worker` (standard library only); parent side: `compare_exits`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from labkit.bench.errors import check_folder
from labkit.bench.folders import holds_run_dirs, new_run_dir
from labkit.bench.launcher import WorkerProcess

__all__ = ["EXITS", "LOG", "compare_exits", "worker"]

EXITS = ("os._exit", "sys.exit")
LOG = "exit.log"
STATUS = 91  # study 000's exit status


def worker(job: dict) -> None:
    """Write a line, exit as the job says, and write another line in `finally`."""
    with open(LOG, "a") as log:
        log.write("before the exit\n")
    try:
        if job["exit"] == "os._exit":
            os._exit(STATUS)
        sys.exit(STATUS)
    finally:
        with open(LOG, "a") as log:
            log.write("in finally\n")


@holds_run_dirs
def compare_exits(out: Path | str | None = None) -> dict[str, dict]:
    """Each way of exiting, in a worker of its own: its exit status and the log's lines."""
    root = new_run_dir(check_folder("out", out), prefix="exits-")
    seen = {}
    for way in EXITS:
        run_dir = root / way
        run_dir.mkdir()
        job = {"exit": way}
        with WorkerProcess(run_dir, "worker", f"{__name__}:worker", job) as process:
            status = process.wait()
        lines = (run_dir / LOG).read_text().splitlines()
        seen[way] = {"exit_status": status, "log_lines": lines, "run_dir": str(run_dir)}
    return seen
