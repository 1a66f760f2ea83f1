"""A reader's own step (an exercise), run in the worker like the built-in ones, with a kill
point after every commit and every write it makes to the files of its run folder, however it
makes them.

The built-in orders name their kill points themselves. A reader's step is code the lab did not
write, so the lab cannot know where its commits are: the bench's commit watch
(`labkit.bench.commit_watch`) finds them, however they are made, in control.db, effect.db or a
SQLite file of the step's own, and lesson 9's watches (`explorer.readers_writes`) find its
writes to any other file of the folder, and note a file it writes outside it. Its retry runs
as after a real restart (`labkit.bench.restart`). Only a reader's worker imports this module.
Worker-side: standard library only.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from labkit.bench.commit_watch import CommitWatch
from labkit.bench.gate import Gate
from labkit.bench.trace import Trace
from labkit.studies.commit_window.stores import KEY, PAYLOAD, Store
from labkit.studies.explorer.readers_writes import watch_writes

__all__ = ["LEARNER_FILE", "restart_if_retry", "run", "watch"]

LEARNER_FILE = "<your step>"  # a reader's step's file name in a traceback (the judge finds it)


def restart_if_retry(job: dict) -> None:
    """A reader's retry (the recovery worker) runs as after a real restart: under a new parent,
    its clocks (SQLite's too) in another year, month, day, hour and minute, on another host
    (`labkit.bench.restart`)."""
    if job["role"] == "recovery":
        from labkit.bench.restart import RETRY_DELAY, move_host, restart_here

        restart_here(RETRY_DELAY)
        move_host()


def learner_step(source: str, name: str) -> Callable[[Store, Store, Gate], None]:
    """A step written by a reader (an exercise): its source, run here like the built-in ones
    (`worker.Step`; not imported from there: the worker imports this module)."""
    namespace = {"KEY": KEY, "PAYLOAD": PAYLOAD}
    exec(compile(source, LEARNER_FILE, "exec"), namespace)  # the reader's code, in their own lab
    return namespace[name]


def run(job: dict, control: Store, effect: Store, gate: Gate, watch: CommitWatch) -> None:
    """Run a reader's step; a `sys.exit()` in it is their error, shown at their line, not the
    end of a step that did its work."""
    step = learner_step(job["step_source"], job["step_name"])
    try:
        step(control, effect, gate)
    except SystemExit:
        import traceback

        # its last line and the reader's frame, as for any other error, on the worker's own
        # stderr (`python_command.FRESH_MAIN`)
        traceback.print_exc(file=sys.__stderr__)
        sys.exit(1)
    watch.observe()  # the point after the step's last commit


def watch(job: dict, gate: Gate, trace: Trace) -> CommitWatch:
    """Before a reader's step opens anything: a kill point after every commit it will make, to
    any SQLite file of the run folder, and after every write to another file of it and every
    file of it made or removed, however it writes them (`readers_writes`), so no window can hide
    from the judge, not even one between a note the step keeps beside the files (a marker, a
    file of seen keys) and its commit (the built-in steps name their points themselves)."""
    return watch_writes(job, gate, trace)
