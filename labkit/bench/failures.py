"""When a run fails: no outcome word is claimed for it, and the reason is said in one line.

A run's word (consistent, duplicate, ...) is claimed only when its workers did what it planned:
each ran to its end or died at its planned kill point. A worker that died of its own error or
timed out fails the run (`worker_failure`: which worker, and its error's last line); so does a
parent that could not go on writing the run's files (`failing_run`: a full disk, a file size
limit). Every study uses these, so a failure reads the same in every lesson.
"""

from __future__ import annotations

import contextlib
import errno
import json
import re
import signal
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

from labkit.bench.errors import RunFailed
from labkit.bench.launcher import WorkerReport

__all__ = [
    "FAILED",
    "error_line",
    "failing_run",
    "first_failure",
    "parent_error",
    "worker_failure",
]

FAILED = "failed"  # the word for a run that claims no outcome
FRAME = re.compile(r'^\s*File "([^"]*)", line (\d+)', re.MULTILINE)  # a traceback's frame


def error_line(stderr: str) -> str:
    """A worker's own error in one line: the traceback's last line, and the line of the reader's
    code it came from, if it did (exec'd code has a file name in <>, such as "<your step>";
    a traceback's first frame is the worker's own start, `python -c`'s "<string>")."""
    lines = stderr.strip().splitlines()
    if not lines:
        return "no error message"
    frames = FRAME.findall(stderr)
    readers = len(frames) > 1 and frames[-1][0].startswith("<")
    return lines[-1].strip() + (f" ({frames[-1][0]}, line {frames[-1][1]})" if readers else "")


def worker_failure(worker: WorkerReport, planned_kill: str | None = None) -> str | None:
    """Why `worker` did not do what was planned, or None if it did: it ran to its end (exit 0)
    or died at `planned_kill` (its own exit 91 there, or the parent's SIGKILL there)."""
    if worker.timed_out:
        return f"{worker.role} worker timed out after {worker.seconds:.3g} s"
    if worker.exit_code == 0 or (planned_kill is not None and worker.killed_at == planned_kill):
        return None
    code = worker.exit_code
    if code is not None and code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else -code
        return f"{worker.role} worker died of signal {name}: {error_line(worker.stderr)}"
    return f"{worker.role} worker exited {code}: {error_line(worker.stderr)}"


def first_failure(plans: Iterable[tuple[WorkerReport, str | None]]) -> str | None:
    """Why a run failed: the first of its workers (each with its planned kill point, or None)
    that did not do what was planned; None if every one did."""
    return next(
        (why for worker, planned in plans if (why := worker_failure(worker, planned))), None
    )


NO_ROOM = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)  # a full disk, a file size limit, a quota
SQLITE_NO_ROOM = ("SQLITE_FULL", "SQLITE_IOERR_WRITE")  # how SQLite reports them (EFBIG: IOERR)


def parent_error(error: OSError | sqlite3.Error) -> str:
    """What stopped the parent, in one line; a full disk (ENOSPC) and a file over the size
    limit (EFBIG) read alike: there is no room to write."""
    if isinstance(error, OSError) and error.errno in NO_ROOM:
        where = f" for {error.filename}" if error.filename else ""
        return f"no room left on the disk{where} ({error.strerror})"
    if getattr(error, "sqlite_errorname", None) in SQLITE_NO_ROOM:
        return f"no room left on the disk (SQLite: {error})"
    return f"{type(error).__name__}: {error}"


@contextlib.contextmanager
def failing_run(run_dir: Path) -> Iterator[None]:
    """Turn a file error in the parent into RunFailed, after marking the run folder failed."""
    try:
        yield
    except (OSError, sqlite3.Error) as error:
        reason = f"the run could not go on: {parent_error(error)}"
        results = run_dir / "results.json"
        try:
            results.write_text(json.dumps({"outcome": FAILED, "failure": reason}))
        except OSError:  # no room even for that: at least no half-written file may remain
            with contextlib.suppress(OSError):
                results.unlink(missing_ok=True)
        raise RunFailed(f"{reason}; run folder: {run_dir}") from None
