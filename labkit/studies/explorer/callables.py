"""Any Python callable with a checkpointer: `run(checkpointer, resume)`, the reader's own way
to run (resume=False) and to recover (resume=True) whatever it checkpoints.

The explorer hands it a LangGraph SqliteSaver on the run's `states.CHECKPOINT_FILE` whose every
`put` and `put_writes` is a crash point (`savers.Recorded`), beside the commits and fsyncs the
callable makes itself. Recovery is the reader's own: the same callable, in a fresh process, with
resume=True; it returns False if it could not finish (anything else: it did). Runs in the trial
server's workers, as graphs do.
"""

from __future__ import annotations

from labkit.studies.explorer.graphs import open_saver
from labkit.studies.explorer.record import CrashPoints
from labkit.studies.explorer.states import CHECKPOINT_FILE
from labkit.studies.explorer.target import load_function

__all__ = ["recover", "run_first"]


def the_callable(job: dict) -> tuple[object, set[str]]:
    """The reader's callable, and the files its code is in (for the source lines)."""
    found, file, _ = load_function(job["target"])
    code = getattr(found, "__code__", None)
    return found, {file, code.co_filename if code else file}


def run_first(job: dict, points: CrashPoints) -> None:
    """Run it once from the start, with a crash point at every durable step."""
    watch = points.watch_commits(ignore=[CHECKPOINT_FILE])
    points.watch_files()
    run, files = the_callable(job)
    points.reader_files |= files
    saver = open_saver(job)
    saver.points = points
    saver.setup()  # the saver's tables: set-up, no crash point
    points.arm()
    run(saver, False)
    watch.observe()


def recover(job: dict, trace: object) -> bool:
    """The reader's recovery: the callable again, resume=True, in this fresh process."""
    run, _ = the_callable(job)
    return run(open_saver(job), True) is not False
