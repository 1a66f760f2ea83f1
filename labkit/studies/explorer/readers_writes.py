"""Where a reader's code in a lesson's worker may keep what it has done, each a kill point:
after every commit to a SQLite file of the run folder (the lab's files, or one of its own),
after every write or rename that reaches another file of it, and after every file of it made,
emptied or removed (an empty marker is a state too). A file written outside the run folder is
noted ("outside"): a kill there cannot be judged, and every run would find what the last one
left. Lesson 2's steps (`commit_window.learner`) and lesson 5's consumers (`outbox.consumer`)
set these watches before the reader's code runs. Worker-side: standard library only.
"""

from __future__ import annotations

import os
import threading

from labkit.bench.commit_watch import CommitWatch
from labkit.bench.gate import Gate
from labkit.bench.trace import Trace
from labkit.studies.explorer.renames import watch_renames
from labkit.studies.explorer.watches import Watches

__all__ = ["ReadersWrites", "watch_writes"]


class ReadersWrites(Watches):
    """Lesson 9's watches of a reader's code, in a lesson's worker: where the explorer
    numbers a crash point (a write that reaches a file of the run folder, a rename into it),
    the gate has a kill point, "after write 1 (processed.json)", and after a file of it made,
    emptied or removed (`watch_made_and_removed`); a file written outside the folder is
    noted ("outside") as there. No fsync's point: a kill after the write leaves
    what a kill after its fsync leaves (the kernel keeps what was written)."""

    quiet = False  # the explorer's own copies of the files are quiet; a reader's code makes none

    def __init__(self, run_dir: str, gate: Gate, trace: Trace) -> None:
        self.run_dir, self.gate, self.trace = run_dir, gate, trace
        self._real_dir = os.path.realpath(run_dir)
        self._lock = threading.RLock()
        self.outside: set[str] = set()

    def hit(self, op: str, name: str) -> None:
        self.gate.after_write(name)

    def wrote(self, op: str, name: str, fd: int) -> None:
        self.hit(op, name)

    def locate(self) -> None:
        """No line of the reader's: the judge names the file."""


def watch_writes(job: dict, gate: Gate, trace: Trace) -> CommitWatch:
    """Before a reader's code opens anything: a kill point after every commit made to a
    SQLite file of the run folder, however it is made (`CommitWatch`, returned), and after
    every write to another file of it and every file of it made, emptied or removed
    (`ReadersWrites`), so that whatever the code keeps, in the lab's files or beside them, is
    a point the judge kills at, as lesson 9's explorer crashes at a write."""
    writes = ReadersWrites(job["run_dir"], gate, trace)
    commits = CommitWatch(job["run_dir"], None, gate.after_commit, trace)
    commits.opened = writes.opened_database  # a database outside the folder: noted
    commits.watch_process()
    writes.watch_writes()
    writes.watch_descriptor_writes()
    writes.watch_made_and_removed()
    watch_renames(writes)
    return commits
