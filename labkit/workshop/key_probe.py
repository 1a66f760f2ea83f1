"""A reader's `operation_key(state)` computed in a worker, before and after a restart.

The judge (`lesson3.keys_after_restart`) starts two workers through the launcher, one after the
other, in one run folder. "before" computes the keys of its requests; "after" restarts first,
as on another machine (`restart_here`: another pid and parent pid, its clocks, Python's and
SQLite's, in another year, month, day, hour and minute (`RETRY_DELAY`), the next attempt in
its environment, as another interpreter, another hash seed; `move_host`: another host name,
address and node id; and another working folder), and gets the same requests in another
order, so a key made of what the process saw before differs too. Each leaves its keys (their
reprs) or the reader's error, with their line, in `<role>.json`. Worker-side: standard library
only.
"""

from __future__ import annotations

import contextlib
import os
import traceback
from collections.abc import Iterator

from labkit.bench.gate import report
from labkit.bench.restart import RETRY_DELAY, move_host, restart_here

__all__ = ["READER_FILE", "probe"]

READER_FILE = "<your operation_key>"  # the reader's code in a traceback


@contextlib.contextmanager
def exit_raises() -> Iterator[None]:
    """`os._exit` in the reader's code raises SystemExit at their line instead of ending the
    worker without a word (`sys.exit` does so by itself)."""
    real_exit = os._exit

    def exit_here(status: int) -> None:
        raise SystemExit(f"os._exit({status})")

    os._exit = exit_here
    try:
        yield
    finally:
        os._exit = real_exit


def keys_here(job: dict) -> list[str]:
    """The reader's function on every request (each a new dict, all kept alive at once)."""
    namespace: dict = {}
    requests = [dict(request) for request in job["requests"]]
    with exit_raises():
        exec(compile(job["source"], READER_FILE, "exec"), namespace)
        return [repr(namespace[job["name"]](request)) for request in requests]


def reader_error(error: BaseException) -> dict:
    """The reader's error in a few words, and the line of their code it came from."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == READER_FILE]
    lines = traceback.format_exception_only(type(error), error)
    return {"error": lines[-1].strip(), "line": frames[-1].lineno if frames else None}


def another_folder(job: dict) -> str:
    """A working folder of its own for the restarted worker, as on another machine: a key kept
    in a file beside the first attempt is not found there."""
    folder = os.path.join(job["run_dir"], f"{job['role']}-elsewhere")
    os.mkdir(folder)
    return folder


def probe(job: dict) -> None:
    """The worker's entry: restart if asked, then the keys (or the error) and what this
    process is: its pid, its parent's, its host's name, and hash("probe"), which a new hash
    seed changes."""
    if job["restart"]:
        restart_here(RETRY_DELAY)
        move_host()
        os.chdir(another_folder(job))
    here = {
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "host": os.uname().nodename,
        "hash": hash("probe"),
    }
    try:
        here["keys"] = keys_here(job)
    except BaseException as error:  # the reader's code, SystemExit too: shown, never a crash
        here.update(reader_error(error))
    report(job, **here)
