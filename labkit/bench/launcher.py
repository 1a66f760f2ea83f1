"""Start worker processes, stop them at kill points, kill them, and always reap them.

Three ways to start a worker, same protocol afterwards:
- `fresh`: a new `python -S` interpreter per worker, 20–55 ms of CPU: the reader's code in the
  crash explorer's fresh restarts, and wherever nothing better is at hand.
- `served`: a fork of the caller's fork server, a clean `python -S` that imported the SQLite
  workers' modules once (`labkit.bench.fork_server`): about a millisecond. Lessons 1, 2 and
  5's workers (lesson 6's start fresh: it waits for a frozen worker's stop, which only the
  worker's parent can see); a fresh interpreter where there is no fork server (not Linux), a
  plain fork inside a trial server.
- `fork`: a fork of labkit's trial server, a clean helper process that imported LangGraph once
  (`labkit.bench.server`); the server forks it ahead of time and hands it the job
  (`labkit.bench.spares`). A LangGraph worker would otherwise pay ~1.4 s of imports each
  time.
Only a server forks, never the Jupyter kernel; each worker is still its own process, opens its
own SQLite connections after it got its job, and dies by SIGKILL.

A worker that must stop at a point writes the point's name to a notify pipe and blocks
reading a resume pipe. The parent waits on the notify pipe (never a sleep-and-hope), then
either writes "continue" or sends SIGKILL. The notify pipe also tells the parent that the
worker has exited: it reaches end-of-file; and so does a pidfd, since a process the worker's
code forked may hold the pipe open. Once a worker is reaped, what its code left running is
ended (`leftovers`).

Its parts: python_command (the command line of a fresh Python), worker_report (what a worker
did), forked_child (a forked worker as a Popen); their names import from here too.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from labkit.bench import fork_server, spares
from labkit.bench.ctrl_c import ctrl_c_held
from labkit.bench.errors import check_choice
from labkit.bench.forked_child import ForkedChild, signal_group
from labkit.bench.gate import EXIT_CODE
from labkit.bench.leftovers import children, end_leftovers
from labkit.bench.portable import LINUX, linux_now, pidfd_or_none
from labkit.bench.python_command import FRESH_MAIN, LABKIT_ROOT, WORKER_PATH, isolated_python
from labkit.bench.readable import readable
from labkit.bench.trace import Trace
from labkit.bench.worker_report import WorkerReport, read_report

__all__ = [
    "LABKIT_ROOT",
    "START_MODES",
    "WorkerProcess",
    "WorkerReport",
    "isolated_python",
    "first_to_end",
    "kill_all_workers",
    "read_report",
]

START_MODES = ("fresh", "served", "fork")
FORKING_ALLOWED = False  # set by labkit.bench.server, the one process that may fork workers
ADOPTING = False  # set where this process adopts its workers' orphans (the server, on Linux)
EXIT_POLL = 0.05  # seconds between two looks at whether a worker without a pidfd has exited

_LIVE: set[WorkerProcess] = set()  # started and not yet reaped, in any thread


def kill_all_workers(under: Path | None = None) -> None:
    """SIGKILL and reap every worker still alive, or only those whose run folder is in `under`:
    the last word of an interrupted sweep, which must not take down a worker that another
    panel on the page holds paused. One that fails to close stops none of the others: the first
    failure is raised once every other worker is closed."""
    failed: list[BaseException] = []
    for worker in list(_LIVE):
        if under is None or worker.run_dir.is_relative_to(under):
            try:
                worker.close()
            except BaseException as error:  # a second Ctrl-C too: it is raised after the rest
                failed.append(error)
    if failed:
        raise failed[0]


def first_to_end(workers: list[WorkerProcess]) -> WorkerProcess:
    """Block until one of `workers` has ended and return it, reaped; one past its timeout is
    killed and returned. A pause nobody planned for is let go on, as `wait` does. For several
    workers run side by side, each ending in its own time."""
    while True:
        ready = listen(workers, min(w._time_left() for w in workers))
        for worker in workers:
            word = worker._heard(ready)
            if word:
                worker.resume()
            elif word is not None or worker._time_left() == 0:
                worker.wait()  # it has exited: reaps it; past its timeout: kills it first
                return worker


def listen(workers: list[WorkerProcess], timeout: float) -> list[int]:
    """Wait up to `timeout` s for a word from any of `workers`: the descriptors ready among
    their notify pipes and pidfds. Where one has no pidfd, it returns every EXIT_POLL s, so
    that the caller looks at that worker's exit status instead."""
    if any(worker._exit_fd is None for worker in workers):
        timeout = min(timeout, EXIT_POLL)
    fds = [fd for w in workers for fd in (w._notify, w._exit_fd) if fd is not None]
    return readable(fds, timeout)


class WorkerProcess:
    """One worker in its own process. Use it as a context manager: leaving it reaps the process.

    `entry` names the worker's function (`module:function`); it gets `job` plus the run
    folder, its role, the kill plan and the two pipe ends."""

    def __init__(
        self,
        run_dir: Path,
        role: str,
        entry: str,
        job: dict,
        *,
        exit_at: str | None = None,
        pause_at: tuple[str, ...] = (),
        timeout: float = 10.0,
        start_mode: str = "fresh",
    ) -> None:
        self.run_dir, self.role, self.timeout = Path(run_dir), role, timeout
        self.entry, self.exit_at = entry, exit_at
        self.start_mode = check_choice("start mode", start_mode, START_MODES)
        self.job = {
            **job,
            "run_dir": str(self.run_dir),
            "role": role,
            "exit_at": exit_at,
            "pause_at": list(pause_at),
        }
        self.proc: subprocess.Popen | ForkedChild | None = None
        self._notify: int | None = None  # the pipe ends on the parent's side, once started
        self._resume: int | None = None
        self._exit_fd: int | None = None  # readable once the worker has exited (a pidfd)
        self._expected: set[int] | None = None  # children of ours that are not the worker's
        self.paused_at: str | None = None
        self.killed_at: str | None = None
        self.timed_out = False
        self.kill_sent = False
        self.left: list[str] = []
        self._tidied = False  # reaped, and what its code left ended (`_reaped`)
        self._lock = threading.Lock()

    def output_path(self, stream: str) -> Path:
        return self.run_dir / f"{self.role}.{stream}"

    def start(self) -> WorkerProcess:
        self._started = time.monotonic()
        _LIVE.add(self)  # from here on kill_all_workers() reaps it, whatever is interrupted
        try:
            if ADOPTING:  # what it leaves will be our children too: these ones are not its
                self._expected = children()
            how = self._how()
            with spares.FORKS:  # listed (self.proc) before anyone looks for leftovers
                how()
            if how == self._start_forked:
                spares.refill()  # the next spare is forked now, while this worker runs
        except BaseException:  # a Ctrl-C held back until the worker was ours lands here
            self.close()
            raise
        return self

    def _how(self) -> Callable[[], None]:
        """How this worker starts here: a `served` one is forked at once inside a trial server,
        and starts fresh where there is no fork server, or where the caller's environment asks
        for macOS's ways now (a worker forked from the server would use Linux's)."""
        if self.start_mode == "fork" or (self.start_mode == "served" and FORKING_ALLOWED):
            return self._start_forked
        if self.start_mode == "served" and linux_now():
            return self._start_served
        return self._start_fresh

    def _start_fresh(self) -> None:
        notify_r, notify_w = os.pipe()
        resume_r, resume_w = os.pipe()
        job = {**self.job, "notify_fd": notify_w, "resume_fd": resume_r}
        # A Ctrl-C waits until the worker is ours (its pid, pipes and pidfd kept): landing inside
        # Popen, it would leave a worker nobody reaps. (The worker starts with SIGINT held too,
        # which it never needs: it runs in a session of its own and dies by SIGKILL.)
        with (
            ctrl_c_held(),
            open(self.output_path("stdout"), "wb") as out,
            open(self.output_path("stderr"), "wb") as err,
        ):
            self.proc = subprocess.Popen(
                isolated_python("-S", "-c", FRESH_MAIN, self.entry, json.dumps(job), *WORKER_PATH),
                cwd=self.run_dir,
                stdout=out,
                stderr=err,
                pass_fds=(notify_w, resume_r),
                start_new_session=True,  # a Ctrl-C reaches the parent only; the parent reaps
            )
            os.close(notify_w)
            os.close(resume_r)
            self._notify, self._resume = notify_r, resume_w
            self._exit_fd = pidfd_or_none(self.proc.pid)

    def _start_forked(self) -> None:
        if not FORKING_ALLOWED:
            raise RuntimeError("start_mode='fork' runs only inside labkit's trial server")
        self._make_output_files()
        # A spare taken is ours whole, pid, pipes and pidfd, and has its job (which closes the
        # job pipe, held by nobody else): a Ctrl-C that came meanwhile is raised after, and
        # kills it.
        with ctrl_c_held():
            spare = spares.take()
            self._adopt(ForkedChild(spare.pid), spare.notify_r, spare.resume_w)
            spare.hand(self.entry, self.job)

    def _start_served(self) -> None:
        self._make_output_files()
        with ctrl_c_held():  # as for a spare: the worker is ours whole before a Ctrl-C
            self._adopt(*fork_server.start_worker(self.entry, self.job))

    def _make_output_files(self) -> None:
        """A forked worker appends to its stdout and stderr, as a fresh one writes them."""
        for stream in ("stdout", "stderr"):
            self.output_path(stream).write_bytes(b"")

    def _adopt(self, proc: ForkedChild, notify: int, resume: int) -> None:
        """Keep a forked worker: its process, the parent's ends of its pipes, a pidfd."""
        self.proc = proc
        self._notify, self._resume = notify, resume
        self._exit_fd = pidfd_or_none(proc.pid)

    def _time_left(self) -> float:
        return max(self._started + self.timeout - time.monotonic(), 0.0)

    def _wait_left(self, until: float | None) -> float:
        if until is None:
            return self._time_left()
        return min(self._time_left(), max(until - time.monotonic(), 0.0))

    def wait_for_pause(self, until: float | None = None) -> str | None:
        """Block until the worker stops at a point (return its name) or exits (return None);
        given `until` (a `time.monotonic()` moment), return None then too, the worker still
        running (`proc.poll()` tells which).

        At the timeout the worker is killed and marked `timed_out`."""
        while (word := self._heard(listen([self], self._wait_left(until)))) is None:
            if self._time_left() == 0:
                self.timed_out = True
                self.kill()
                return None
            if until is not None and time.monotonic() >= until:
                return None
        self.paused_at = word.decode().strip() or None
        return self.paused_at

    def _heard(self, ready: list[int]) -> bytes | None:
        """What the worker said, as far as `ready` (from `listen`) tells: the name of the point
        it stopped at, b"" once it has exited (its notify pipe at end-of-file, its pidfd
        readable, or without one, its exit status), or None: nothing yet."""
        if self._notify in ready:
            return os.read(self._notify, 64)
        if self._exit_fd in ready or (self._exit_fd is None and self.proc.poll() is not None):
            return b""
        return None

    def resume(self) -> None:
        """Let a paused worker go on to its next point. One that a signal ended while it was
        paused (a SIGTERM with no handler) has nothing to go on with: its exit tells the rest."""
        with contextlib.suppress(BrokenPipeError):
            os.write(self._resume, b"continue\n")
        self.paused_at = None

    def kill(self, reap: bool = True) -> None:
        """SIGKILL the worker where it stands, note the kill in the trace, and reap it.

        `reap=False` (a forked worker): return once every thread of it has stopped (SIGSTOP
        first, `ForkedChild.freeze`), its files as the kill leaves them, and let the kernel
        tear it down while the caller goes on; `close` (or `kill()`) reaps it."""
        with self._lock:
            if self.proc is None or self.proc.returncode is not None:
                return
            if not self.kill_sent:
                # Only where a worker dies with the server even stopped (PR_SET_PDEATHSIG):
                # elsewhere its watch is a timer, which a stopped process never runs.
                frozen = (
                    not reap and LINUX and isinstance(self.proc, ForkedChild) and self.proc.freeze()
                )
                self._sigkill()
                if frozen:
                    return
            self.proc.wait()
            self._reaped(killed=True)

    def _sigkill(self) -> None:
        """Send SIGKILL (unless it has exited: a frozen worker that had, is reaped already)
        and note it in the trace: after this, the worker runs no more of its code."""
        if isinstance(self.proc, ForkedChild):  # the worker and all of its group
            self.proc.kill_group()
        elif self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):  # reaped by another thread just now
                signal_group(self.proc.pid, signal.SIGKILL)
        self.kill_sent = True
        self.killed_at = self.paused_at
        trace = Trace(self.run_dir, self.role)
        trace.note(  # not fsynced: the lab's own line, which no kill of a worker can lose
            "kill",
            pid=self.proc.pid,
            by=os.getpid(),
            point=self.killed_at,
            mode="sigkill",
            timed_out=self.timed_out,
        )
        trace.close()

    def finish(self, kill_at: str | None = None) -> int:
        """Let the worker run to its end, SIGKILL it if it stops at `kill_at`, reap it, and
        return its exit status (-9 when killed)."""
        while (point := self.wait_for_pause()) is not None:
            if point == kill_at:
                self.kill()
                break
            self.resume()
        return self.wait()

    def wait(self) -> int:
        """Wait for the worker to exit by itself (killing it at the timeout) and reap it."""
        while self.wait_for_pause() is not None:
            self.resume()  # a pause nobody planned for: let it go on
        try:
            self.proc.wait(timeout=self._time_left())
            self._reaped()
        except subprocess.TimeoutExpired:
            self.timed_out = True
            self.kill()
        return self.proc.returncode

    def _reaped(self, killed: bool = False) -> None:
        """The worker has been reaped: note when, and end what its code left running (`killed`:
        the lab killed its whole group, which is then the lab's doing, not left by its code)."""
        self._ended = time.monotonic()
        with spares.FORKS:  # no fork of ours is on its way to a list meanwhile
            others = {s.pid for s in spares.waiting()} | {w.proc.pid for w in _LIVE if w.proc}
            expected = None if self._expected is None else self._expected | others
            self.left = end_leftovers(self.proc.pid, expected, killed)
        self._tidied = True

    def close(self) -> None:
        """Kill the worker if it still runs, reap it, and close the pipes. Safe to call twice."""
        if self.proc is not None:
            self.kill()
            if not self._tidied:  # a Ctrl-C came between its reap and the end of what it left
                self._reaped(killed=self.kill_sent)
        with self._lock, ctrl_c_held():  # cut in two, a second close would close them again
            if self._resume is not None:
                os.close(self._notify)
                os.close(self._resume)
                self._resume = None
            if self._exit_fd is not None:
                os.close(self._exit_fd)
                self._exit_fd = None
            _LIVE.discard(self)

    def report(self) -> WorkerReport:
        """The worker's record, once it has been reaped."""
        exited_at_point = self.proc.returncode == EXIT_CODE and self.exit_at
        return WorkerReport(
            role=self.role,
            pid=self.proc.pid,
            exit_code=self.proc.returncode,
            killed_at=self.killed_at or (self.exit_at if exited_at_point else None),
            timed_out=self.timed_out,
            seconds=round(self._ended - self._started, 4),
            stdout=self.output_path("stdout").read_text(),
            stderr=self.output_path("stderr").read_text(),
            left=self.left,
        )

    def __enter__(self) -> WorkerProcess:
        try:
            return self.start()
        except BaseException:  # `with` calls __exit__ only once __enter__ has returned
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()
