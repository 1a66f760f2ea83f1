"""Crash points: every moment a run of the reader's code makes something durable, numbered.

A crash point comes after each commit to a SQLite file of the run (the bench's commit watch,
however the reader writes it), each write that reaches a file in the run folder, fsynced or
not (a killed process loses no byte the kernel has: only a power cut does), through a file
object or a descriptor (`os.write`), each `os.fsync` of one that makes something new
durable, and each checkpointer `put` / `put_writes` (`savers.Recorded`). A file or a
database opened for writing outside the run folder is noted ("outside"): a crash there
cannot be explored, and each replay would write there again. A file of the run that changed
with no crash point of its own (another program wrote it) is noted too ("unwatched"): its
window was never explored. Each point carries the reader's source line. Recording (the run
without a crash) also notes what the files hold at every point, so that points whose crash
states are equal are explored once (ALICE's idea: a crash can only leave what was durable).
Replaying, the worker dies at its planned point: by SIGKILL, sent to itself right there, or
by `os._exit(91)`; in step mode it pauses at each for the parent. Here the points are
numbered and the forks killed; the watches that find them are `watches`, what the files
hold is `states`. Worker-side: standard library only.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from threading import Lock
from types import FrameType

from labkit.bench.commit_watch import CommitWatch
from labkit.bench.gate import EXIT_CODE, Gate
from labkit.bench.output import flush_output
from labkit.bench.trace import TRACE_FILE, Trace
from labkit.studies.explorer.postgres_runs import postgres_run
from labkit.studies.explorer.postgres_writes import watch_postgres_writes
from labkit.studies.explorer.states import (
    CHECKPOINT_FILE,
    kept_in,
    lab_file,
    read_state,
    state_digest,
)
from labkit.studies.explorer.watches import Watches
from labkit.studies.explorer.written_file import mark

__all__ = ["KILL_MODES", "CrashPoints", "copy_files", "point_folder", "point_name", "readers_own"]

KILL_MODES = ("sigkill", "exit")  # SIGKILL at the point, or the gate's os._exit(91)
NOT_READERS = tuple(  # where the code is not the reader's: the lab, Python, installed packages
    os.path.join(os.path.realpath(folder), "")
    for folder in {
        os.path.dirname(os.path.dirname(os.path.dirname(__file__))),  # labkit
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
    }
)


def point_name(n: int) -> str:
    """The name crash point `n` has at the gate (kill plans and step mode use it)."""
    return f"crash point {n}"


def point_folder(exploration: str, n: int) -> str:
    """The run folder of crash point `n` in an exploration's folder."""
    return os.path.join(exploration, f"point-{n:03d}")


class CrashPoints(Watches):
    """Numbers the crash points a worker passes; at its planned one, the worker dies.

    A point is planned by what it is, not by its number: its operation, its detail and which
    time it comes (`nth`). Where LangGraph saves in a background thread, two points can come in
    either order from one run to the next; the plan still kills at the same operation.

    Recording with `fork_to` (an exploration's folder), the worker also crashes itself at the
    first point of each new crash state without a second run to it: it forks there, the fork
    dies at once (SIGKILL or `os._exit`, as a planned kill), and the files it leaves are copied
    into the point's own folder for the recovery, before the recording goes on. The fork is a
    process that ran the code to the point (its parent's past is its own) and is killed there;
    a kill changes no file, so what it leaves is the files as they are. Only a process with one
    thread forks: another thread could write while the files are copied (such a point is
    replayed by a worker that runs to it instead). A step's points are told apart by the
    files' state; a graph's (`fork_each`) are each their own, as the explorer counts them."""

    def __init__(self, job: dict, trace: Trace, reader_files: Iterable[str]) -> None:
        self.job, self.run_dir, self.trace = job, job["run_dir"], trace
        self.plan, self.kill_mode = job.get("crash_at"), job.get("kill_mode", "sigkill")
        self.gate = Gate(trace, job)  # step mode: pause at each point for the parent
        self.recording = job["role"] == "record"
        self.fork_to = job.get("fork_to") if self.recording else None
        # every point its own crash state, forked at each (a graph's): only with `fork_to`
        self.fork_each = bool(self.fork_to and job.get("fork_each"))
        self.forked: set[str] = set()  # the crash states a fork was killed in already
        self.dying: dict[int, int] = {}  # the forks killed and not reaped yet: pid -> point
        self.next_commit: tuple[str, str, str] | None = None  # (op, what, file): a service's
        self.reader_files = set(reader_files)
        self.count = 0
        self.armed = False  # set-up (the files' tables, the nodes' context) is no crash point
        self.seen: dict[tuple[str, str], int] = {}
        self.watch: CommitWatch | None = None
        self.outside: set[str] = set()  # files opened for writing outside the run folder
        self.outside_ignored = tuple(p for p in job.get("ignore_files", ()) if os.path.isabs(p))
        self.pointed: set[str] = set()  # the run's files a crash point came after a change of
        self.marks: dict[str, tuple[int, int]] = {}  # a file's size and time at its last point
        self.armed_state: dict | None = None  # recording: what the files held when armed
        self.quiet = False  # the lab's own writes (a fork's files, copied): no crash points
        self._lock = threading.RLock()  # a graph's writes can come from its worker threads
        self._trace_inode = os.stat(os.path.join(self.run_dir, TRACE_FILE)).st_ino
        self._real_dir = os.path.realpath(self.run_dir)
        self.pid = os.getpid()  # the worker: only its own points are numbered
        # the frames of coroutines that wait, innermost first (a graph's event loop sets it)
        self.suspended: Callable[[], Iterable] = tuple

    def hit(
        self,
        op: str,
        detail: str,
        where: str | None = None,
        hold: Lock | None = None,
        said: dict | None = None,
    ) -> None:
        """The run just made something durable: die here if planned, else number and note it.
        `detail` names it (a file, "checkpoint of step 0 (loop)"); `said` is that as a code and
        fields, for the views to say in the reader's language (a file's name needs none).
        Recording, the files' state is read holding `hold` (a saver's lock: no other save of
        a background thread lands while it is read)."""
        if not self.armed or os.getpid() != self.pid:  # a process the reader's code forked
            return
        with self._lock:
            self.count += 1
            nth = self.seen[op, detail] = self.seen.get((op, detail), 0) + 1
            if op in ("write", "fsync"):
                self.pointed.add(detail)
            if self.plan and [self.plan[k] for k in ("op", "detail", "nth")] == [op, detail, nth]:
                self.die()  # at once: no other thread may go on meanwhile
            where = where or self.locate()
            name = point_name(self.count)
            fields = {"n": self.count, "op": op, "detail": detail, "nth": nth, "where": where}
            if said:
                fields["said"] = said
            if self.recording and self.fork_to and not self.fork_each:  # a step's, told apart
                with hold or contextlib.nullcontext():
                    fields["state"] = state_digest(self.run_dir)
            self.trace.note("point", point=str(self.count), **fields)  # the matrix's number
            state = str(self.count) if self.fork_each else fields.get("state")
            if state is not None and state not in self.forked and self.alone():
                self.forked.add(state)
                self.crash_a_fork(self.count)
            if name in self.gate.pause_at:
                self.gate(name)  # step mode: the parent goes on, or kills it here

    def hit_commit(self, name: str) -> None:
        """A commit that is no file's: a Postgres database's (the run's own schema)."""
        self.hit("commit", name)

    def wrote(self, op: str, name: str, fd: int) -> None:
        """Bytes of file `name` reached the kernel (a write) or the disk (an fsync): a crash
        point, and the file's mark, to know whether a later fsync makes anything new."""
        self.marks[name] = mark(fd)
        self.hit(op, name)

    def arm(self) -> None:
        """The set-up is over: what was committed so far is no crash point; what comes is."""
        if self.watch is not None:
            self.watch.observe()
        if self.recording:
            self.armed_state = read_state(self.run_dir)
        # the reader's code has imported psycopg now: a commit to the run's schema is a point
        watch_postgres_writes(self.note_outside, postgres_run(self.job), self.hit_commit)
        self.armed = True

    def note_changes_without_a_point(self, ignored: Iterable[str] = ()) -> None:
        """Recording, at its end: a file of the run that changed although no crash point ever
        came after a change of it (written where the explorer does not look: `mmap`, a
        subprocess, a C library's own writes) goes into the trace as "unwatched", so that its
        windows, never explored, keep the matrix from being green."""
        if self.armed_state is None:
            return
        end = read_state(self.run_dir)
        changed = {
            n for n in end.keys() | self.armed_state.keys() if end.get(n) != self.armed_state.get(n)
        }
        unseen = sorted(
            name
            for name in changed - set(ignored)
            if self.pointed.isdisjoint(kept_in(self.run_dir, name))  # a shelf's: its index's too
        )
        if unseen:
            self.trace.event("unwatched", files=unseen, reason="no_point")

    def die(self) -> None:
        """End this process here: SIGKILL sent to itself, or `os._exit` (the gate's code)."""
        if self.kill_mode == "exit":
            os._exit(EXIT_CODE)
        os.kill(os.getpid(), signal.SIGKILL)

    def alone(self) -> bool:
        return threading.active_count() == 1

    def crash_a_fork(self, n: int) -> None:
        """Fork here and let the fork die at once; copy what it leaves to point `n`'s folder,
        with the trace as that process knew it (its part of the timeline: "first").

        By SIGKILL, this process sends it too, and copies at once: the fork's only code is
        its own kill (it writes nothing), so the files are what it leaves while the kernel
        still tears it down (a few ms, on another core); it is reaped at a later fork once
        that is over, or by `reap`, and its exit status noted then."""
        self.reap_ended()
        flush_output()  # nothing buffered may be written twice, once by each process
        child = os.fork()
        if child == 0:
            self.die()
        if self.kill_mode == "sigkill":
            os.kill(child, signal.SIGKILL)
        else:  # os._exit is the fork's own doing: wait until it is done
            os.waitid(os.P_PID, child, os.WEXITED | os.WNOWAIT)
        self.dying[child] = n
        folder = point_folder(self.fork_to, n)
        os.mkdir(folder)
        self.quiet = True
        try:
            copy_files(self.run_dir, folder)
        finally:
            self.quiet = False
        trace = Trace(folder, "first")
        trace.note("kill", point=point_name(n), pid=child, mode=self.kill_mode)
        trace.close()

    def reap(self) -> None:
        """Wait for the forks killed so far, and note how each ended (its exit status)."""
        while self.dying:
            child, n = self.dying.popitem()
            code = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
            self.note_forked(child, n, code)

    def reap_ended(self) -> None:
        """Reap the forks whose teardown is over, without waiting for the others (a big
        process's takes milliseconds: `reap` waits for them at the end)."""
        for child, n in list(self.dying.items()):
            ended, status = os.waitpid(child, os.WNOHANG)
            if ended:
                del self.dying[child]
                self.note_forked(child, n, os.waitstatus_to_exitcode(status))

    def note_forked(self, child: int, n: int, code: int) -> None:
        self.trace.note("forked", n=n, pid=child, parent=os.getppid(), code=code)

    def locate(self) -> str | None:
        """The innermost line of the reader's code on this thread's stack, as file:line: in
        the files of the target, or in any other file of theirs that it calls (a helper
        module beside a driver), never in the lab, Python or an installed package. On a
        thread that runs no code of theirs (aiosqlite's, committing for an `async def`
        node), the line where their coroutine waits for it (`suspended`)."""
        frames = stack_of(sys._getframe(1))
        if threading.current_thread() is not threading.main_thread():
            frames = itertools.chain(frames, self.suspended())
        frame = self.readers_frame(frames)
        return (
            None
            if frame is None
            else f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"
        )

    def readers_frame(self, frames: Iterable) -> FrameType | None:
        """The first of `frames` that runs the reader's code: a file of the target's, or any
        other file of theirs."""
        for frame in frames:
            file = frame.f_code.co_filename
            if file in self.reader_files or readers_own(file):
                return frame
        return None

    def note_left_running(self, stacks: Iterable[Iterable]) -> None:
        """Recording, at its end: work of the reader's code still running (a daemon thread, an
        asyncio task no one awaited: each by its frames, innermost first) goes into the trace
        as "unwatched", named by its function and line: what it does after the run ended
        (a mail it sends) is never explored, so the matrix is never green. A library's work
        (a tracer's thread) runs no code of theirs."""
        running = []
        for frames in stacks:
            frame = self.readers_frame(frames)
            if frame is not None:
                file = os.path.basename(frame.f_code.co_filename)
                running.append(f"{frame.f_code.co_name} ({file}:{frame.f_lineno})")
        if running and self.recording:
            self.trace.event("unwatched", files=running, reason="running")


@functools.cache
def readers_own(file: str) -> bool:
    """A file of the reader's own: a real file outside the lab, Python and its packages."""
    if file.startswith("<"):  # <frozen ...>, <string>: no file of anyone's
        return False
    path = os.path.realpath(file)
    return not path.startswith(NOT_READERS) and os.path.isfile(path)


def copy_files(run_dir: str, folder: str) -> None:
    """Every file of the run as it is now (a journal too: it is the state; the explorer's
    checkpointer, though the lab's, too) into `folder`, and the trace with its worker's events
    said to be the first worker's."""
    for name in os.listdir(run_dir):
        path = os.path.join(run_dir, name)
        if name == TRACE_FILE:
            with open(path, "rb") as trace:
                events = trace.read().replace(b'"role": "record"', b'"role": "first"')
            with open(os.path.join(folder, name), "wb") as copy:
                copy.write(events)
        elif lab_file(name, run_dir) and not name.startswith(CHECKPOINT_FILE):
            continue
        elif os.path.isdir(path):
            shutil.copytree(path, os.path.join(folder, name))
        else:
            shutil.copyfile(path, os.path.join(folder, name))


def stack_of(frame: object) -> Iterator:
    """A thread's frames, from `frame` outwards."""
    while frame is not None:
        yield frame
        frame = frame.f_back
