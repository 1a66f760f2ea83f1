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
    "Failure",
    "english_line",
    "error_fields",
    "failing_run",
    "failure",
    "first_failure",
    "parent_failure",
    "run_failed",
    "worker_failure",
]

FAILED = "failed"  # the word for a run that claims no outcome
FRAME = re.compile(r'^\s*File "([^"]*)", line (\d+)', re.MULTILINE)  # a traceback's frame
# a worker's one-line summary of its error (bench.spares.error_summary): "KeyError: 'n'
# (my_step.py, line 3)", the error and the line of the reader's module it came from
SUMMARY_AT = re.compile(r"^(.*) \(([^(),]+\.py), line (\d+)\)$")

# Why a run claims no outcome, as data: {"code": ..., "role": ..., fields}. A plain dict, so
# it crosses the trial server's pipe and sits in results.json as it is; a view says it from
# the catalogue's failure.<code> (language/failures.failure_text), at the moment it is shown.
# An "error" field holds the error's own last line: outside words, quoted, never translated.
Failure = dict


def failure(code: str, role: str | None = None, **fields: object) -> Failure:
    """A failure's code, the role of the worker it is about (None: the run's own parent), and
    its fields."""
    return {"code": code, "role": role, **fields}


def error_fields(stderr: str) -> dict:
    """A worker's own error: "error", the traceback's last line (None if it said nothing),
    and "file" and "line" of the reader's code it came from, if it did (exec'd code has a
    file name in <>, such as "<your step>"; a traceback's first frame is the worker's own
    start, `python -c`'s "<string>"; a module's line is in the worker's summary line)."""
    lines = stderr.strip().splitlines()
    if not lines:
        return {"error": None}
    last, frames = lines[-1].strip(), FRAME.findall(stderr)
    if said := SUMMARY_AT.match(last):  # the worker's own summary names the reader's line
        return {"error": said[1], "file": said[2], "line": int(said[3])}
    readers = len(frames) > 1 and frames[-1][0].startswith("<")
    where = {"file": frames[-1][0], "line": int(frames[-1][1])} if readers else {}
    return {"error": last, **where}


def worker_failure(worker: WorkerReport, planned_kill: str | None = None) -> Failure | None:
    """Why `worker` did not do what was planned, or None if it did: it ran to its end (exit 0)
    or died at `planned_kill` (its own exit 91 there, or the parent's SIGKILL there)."""
    if worker.timed_out:
        return failure("timed_out", worker.role, seconds=round(worker.seconds, 3))
    if worker.exit_code == 0 or (planned_kill is not None and worker.killed_at == planned_kill):
        return None
    code = worker.exit_code
    if code is not None and code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        return failure("signal", worker.role, signal=name, **error_fields(worker.stderr))
    return failure("exited", worker.role, exit_code=code, **error_fields(worker.stderr))


def first_failure(plans: Iterable[tuple[WorkerReport, str | None]]) -> Failure | None:
    """Why a run failed: the first of its workers (each with its planned kill point, or None)
    that did not do what was planned; None if every one did."""
    return next(
        (why for worker, planned in plans if (why := worker_failure(worker, planned))), None
    )


NO_ROOM = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)  # a full disk, a file size limit, a quota
SQLITE_NO_ROOM = ("SQLITE_FULL", "SQLITE_IOERR_WRITE")  # how SQLite reports them (EFBIG: IOERR)


def parent_failure(error: OSError | sqlite3.Error) -> Failure:
    """What stopped the parent: a full disk (ENOSPC) and a file over the size limit (EFBIG)
    read alike, there is no room to write ("no_room", with the file and the system's words);
    any other error is quoted as it is ("parent_error")."""
    if isinstance(error, OSError) and error.errno in NO_ROOM:
        return failure("no_room", file=error.filename, error=error.strerror)
    if getattr(error, "sqlite_errorname", None) in SQLITE_NO_ROOM:
        return failure("no_room", file=None, error=f"SQLite: {error}")
    return failure("parent_error", error=f"{type(error).__name__}: {error}")


@contextlib.contextmanager
def failing_run(run_dir: Path) -> Iterator[None]:
    """Turn a file error in the parent into RunFailed, after marking the run folder failed."""
    try:
        yield
    except (OSError, sqlite3.Error) as error:
        why = parent_failure(error)
        results = run_dir / "results.json"
        try:
            results.write_text(json.dumps({"outcome": FAILED, "failure": why}))
        except OSError:  # no room even for that: at least no half-written file may remain
            with contextlib.suppress(OSError):
                results.unlink(missing_ok=True)
        raise run_failed(why, run_dir) from None


def english_line(why: Failure) -> str:
    """A failure's English line, where data keeps a line beside its code (the explorer's rows'
    `failure`, beside `failed`); the catalogue is loaded only now, as for a refusal."""
    from labkit.language import catalogue
    from labkit.language.failures import failure_text

    return failure_text(why, catalogue("en"))


def run_failed(
    why: Failure, run_dir: Path, code: str = "run_failed", kind: type[RunFailed] = RunFailed
) -> RunFailed:
    """A failure that ends a call as a RunFailed (`kind`): its English line (the catalogue's
    failure.<code>, loaded only now, as a refusal's is), and its code and fields for a view
    or the command line to say in the reader's language."""
    from labkit.language import catalogue
    from labkit.language.failures import run_failed_text

    error = kind("", code, failure=why, run_dir=str(run_dir))
    error.args = (run_failed_text(error, catalogue("en")),)
    return error
