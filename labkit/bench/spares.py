"""Spare workers: processes forked from the trial server ahead of time, each waiting for a job.

A fork of the server costs a few milliseconds (its page tables hold all of LangGraph), and a
trial needs two workers one after the other. So the server keeps `KEPT` spares: forked while
the previous worker runs, each blocked on a job pipe. The launcher hands a spare its job as one
JSON line; from then on the spare is the worker: its own session, its output in the run folder,
the job's entry function, then `os._exit`. It knew nothing of the job before, so it opens every
file and SQLite connection of its own after it got it.

A spare dies with the server (`portable.die_with`), whether it still waits for a job or is a
worker in the middle of one. Where Linux lets it, a spare adopts the orphans of the code it runs
(`leftovers.become_subreaper`), so that the launcher can end them with it.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import sys
import threading
import traceback

from labkit.bench.ctrl_c import ctrl_c_held
from labkit.bench.installed import installed
from labkit.bench.leftovers import become_subreaper
from labkit.bench.output import flush_output
from labkit.bench.portable import die_with, open_descriptors

__all__ = [
    "Spare",
    "close_all_but",
    "drop",
    "error_summary",
    "print_error",
    "refill",
    "take",
    "waiting",
]

KEPT = 2  # a trial takes two workers: the one that is killed, and the recovery
LABKIT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_ready: list[Spare] = []
# Held from a fork of the server until the new process is listed (a spare waiting, or a
# worker's proc): whoever lists the server's children to find what a worker's code left holds
# it too, so that a fork on its way to a list is never taken for a leftover and killed.
FORKS = threading.RLock()


def run_entry(entry: str, job: dict) -> None:
    """Call `module:function(job)`, as a fresh worker's command line does."""
    module, function = entry.split(":")
    getattr(importlib.import_module(module), function)(job)


class Spare:
    """One process forked now, waiting for its job; the server holds the other pipe ends."""

    def __init__(self) -> None:
        job_r, self.job_w = os.pipe()
        self.notify_r, notify_w = os.pipe()  # the worker says where it stopped; EOF: it exited
        resume_r, self.resume_w = os.pipe()  # the parent says "continue"
        flush_output()  # nothing buffered may be written twice, once by each process
        server = os.getpid()
        self.pid = os.fork()
        if self.pid == 0:
            die_with(server)
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the server's requests are not for it
            close_all_but(0, 1, 2, job_r, notify_w, resume_r)
            os.setsid()  # a Ctrl-C meant for the server does not reach it
            become_subreaper()  # a daemon its code starts stays its child while it runs
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # held by the server only
            become_worker(job_r, notify_w, resume_r)
        for fd in (job_r, notify_w, resume_r):
            os.close(fd)

    def hand(self, entry: str, job: dict, environ: dict | None = None) -> None:
        """Give the spare its job, and the environment it runs in if not the server's: it starts
        at once. The job pipe is closed after it."""
        line = (json.dumps({"entry": entry, "job": job, "environ": environ}) + "\n").encode()
        while line:
            line = line[os.write(self.job_w, line) :]
        os.close(self.job_w)


def close_all_but(*keep: int) -> None:
    """Close every file descriptor but `keep`, as subprocess's close_fds does: a worker must not
    hold the server's pipes, or another worker's (which would hide its end-of-file)."""
    for fd in open_descriptors():
        if fd not in keep:
            with contextlib.suppress(OSError):  # the listing's own, closed once it returned
                os.close(fd)


def become_worker(job_r: int, notify_w: int, resume_r: int) -> None:
    """In the spare: wait for the job, send output to the run folder, run the entry, exit."""
    code = 1
    try:
        with os.fdopen(job_r) as pipe:
            line = pipe.readline()
        if not line:  # the server went away before giving a job
            os._exit(0)
        request = json.loads(line)
        if request["environ"] is not None:  # a fork server's worker: its caller's, as it is now
            os.environ.clear()
            os.environ.update(request["environ"])
        job = {**request["job"], "notify_fd": notify_w, "resume_fd": resume_r}
        for fd, stream in ((1, "stdout"), (2, "stderr")):
            path = os.path.join(job["run_dir"], f"{job['role']}.{stream}")
            output = os.open(path, os.O_WRONLY | os.O_APPEND)
            os.dup2(output, fd)
            os.close(output)
        os.chdir(job["run_dir"])  # as a fresh worker's: a relative path lands in the run folder
        run_entry(request["entry"], job)
        code = 0
    except SystemExit as exit:  # as Python ends: sys.exit(3) is status 3, a message status 1
        code = exit_status(exit)
    except BaseException as error:
        print_error(error)
    finally:
        try:
            flush_output()
        finally:  # whatever the reader's code left in sys.stdout: never back into the server
            os._exit(code)


def exit_status(exit: SystemExit) -> int:
    """The status Python exits with after `exit` reached the top: its code, 0 for None, and 1
    for anything else, which is printed on stderr first."""
    if exit.code is None or isinstance(exit.code, int):
        return exit.code or 0
    print(exit.code, file=sys.__stderr__)
    return 1


def print_error(error: BaseException) -> None:
    """A worker's error on its stderr, where the parent reads its last line
    (`failures.error_fields`): the traceback without the notes LangGraph adds to the reader's
    exception ("During task with name ..."), then the error in one line (`error_summary`),
    unless the traceback ends with that line already."""
    trace = without_notes(error)
    lines = "".join(trace.format()).splitlines()
    said = summary(trace)
    # Python's own stderr, the worker's file: the reader's code may have put another in its place
    print(*lines, *([said] if lines[-1] != said else []), sep="\n", file=sys.__stderr__)


def error_summary(error: BaseException) -> str:
    """An error in one line: its type, the first line of its message (LangGraph adds a
    second: "For troubleshooting, visit ..."), and the line of the reader's module it came
    from: "KeyError: 'n' (my_step.py, line 3)". Code given as text ("<your step>") is named by
    the traceback's last frame, where the parent finds it (`failures.error_fields`)."""
    return summary(without_notes(error))


def without_notes(error: BaseException) -> traceback.TracebackException:
    trace = traceback.TracebackException.from_exception(error)
    trace.__notes__ = None  # notes are said after the error: its line would no longer be last
    return trace


def summary(trace: traceback.TracebackException) -> str:
    """`error_summary`, of a traceback already made."""
    lines = "".join(trace.format_exception_only()).splitlines()
    said = next(line for line in lines if not line.startswith(" "))  # a SyntaxError's is last
    frame = next((f for f in reversed(trace.stack) if in_readers_module(f.filename)), None)
    return f"{said} ({os.path.basename(frame.filename)}, line {frame.lineno})" if frame else said


def in_readers_module(file: str) -> bool:
    """Whether `file` is a module of the reader's: not labkit's, nor installed (the standard
    library, LangGraph), nor code given as text, nor Python's own ("<frozen ...>")."""
    return not (installed(file) or file.startswith(("<", LABKIT)))


def take() -> Spare:
    """A spare for the next worker: a waiting one, or one forked now if none waits."""
    if not _ready:
        refill()
    return _ready.pop(0)


def waiting() -> list[Spare]:
    """The spares forked and waiting for a job."""
    return list(_ready)


def refill() -> None:
    """Fork spares until `KEPT` wait: call it once a worker has its job, while it works."""
    while len(_ready) < KEPT:
        # a Ctrl-C must not fall between the fork and the list: the spare would be lost
        with ctrl_c_held(), FORKS:
            _ready.append(Spare())


def drop() -> None:
    """End the waiting spares (an empty job pipe makes them exit) and reap them."""
    while _ready:
        spare = _ready.pop()
        for fd in (spare.job_w, spare.notify_r, spare.resume_w):
            os.close(fd)
        os.waitpid(spare.pid, 0)
