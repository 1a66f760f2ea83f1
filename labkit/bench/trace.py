"""The trace: one JSON line per event, written (`note`; `event` fsyncs it too) before the
worker takes its next step. A written line survives a SIGKILL of its writer (the kernel has
it); an fsync guards against a power cut only, which no run here makes: the points and kills
of every run are noted, without the fsync that would put a disk's wait on a trial's path.

Every line carries `t_ns` (CLOCK_MONOTONIC, shared by all processes on the machine) and the
writer's `pid`, so that the events of the first worker, the parent and the recovery worker
can be laid on one timeline afterwards. A line that is written happened; a kill can only cut
off events that had not been written yet.
"""

from __future__ import annotations

import json
import os
import time

__all__ = ["TRACE_FILE", "Trace", "append_json_line", "read_json_lines", "read_trace"]

TRACE_FILE = "trace.jsonl"
MONOTONIC_NS = time.monotonic_ns  # bound now: a restarted worker's moved clocks move no event
# Bound now too, before a worker's watches wrap it (the explorer's, lessons 2 and 5's): a trace
# is the lab's own file wherever it is (a recording's fork writes into its point's folder), and
# the watches never take it for a file of the reader's.
OPEN = os.open


class Trace:
    """Appends events to a run folder's trace file, durably, one at a time."""

    def __init__(self, run_dir: str | os.PathLike, role: str) -> None:
        self.role = role
        self._fd = OPEN(
            os.path.join(run_dir, TRACE_FILE), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644
        )

    def event(self, name: str, **fields: object) -> None:
        """Write one event and fsync it: after this returns, the event survives a kill."""
        append_json_line(self._fd, self._record(name, fields))

    def note(self, name: str, **fields: object) -> None:
        """Write one event without fsync: it survives a kill of this process (the kernel has
        it), not a power cut. For events that come many times a run (the explorer's points)."""
        os.write(self._fd, (json.dumps(self._record(name, fields)) + "\n").encode())

    def _record(self, name: str, fields: dict) -> dict:
        record = {"t_ns": MONOTONIC_NS(), "pid": os.getpid(), "role": self.role}
        record.update(event=name, **fields)
        return record

    def close(self) -> None:
        os.close(self._fd)


def append_json_line(fd: int, record: dict) -> None:
    """One JSON line in one write to an O_APPEND file, then fsync: a kill cannot tear it."""
    os.write(fd, (json.dumps(record) + "\n").encode())
    os.fsync(fd)


def read_json_lines(path: str | os.PathLike) -> list[dict]:
    """Every line of a JSON-lines file (none if the file does not exist yet)."""
    if not os.path.exists(path):
        return []
    with open(path) as lines:
        return [json.loads(line) for line in lines if line.strip()]


def read_trace(run_dir: str | os.PathLike) -> list[dict]:
    """All events of a run, in the order they were written."""
    return read_json_lines(os.path.join(run_dir, TRACE_FILE))
