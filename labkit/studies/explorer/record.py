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
by `os._exit(91)`; in step mode it pauses at each for the parent. Worker-side: standard
library only.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import hashlib
import io
import itertools
import json
import os
import shutil
import signal
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from threading import Lock

from labkit.bench.commit_watch import HEADER, CommitWatch, read_file
from labkit.bench.gate import EXIT_CODE, Gate
from labkit.bench.trace import TRACE_FILE, Trace
from labkit.studies.explorer.postgres_runs import postgres_run
from labkit.studies.explorer.postgres_writes import watch_postgres_writes

__all__ = [
    "KILL_MODES",
    "CrashPoints",
    "point_folder",
    "point_name",
    "read_state",
    "skip_disk_waits",
    "state_digest",
    "unreadable",
]

KILL_MODES = ("sigkill", "exit")  # SIGKILL at the point, or the gate's os._exit(91)
VOLATILE = ("pid", "t_ns")  # fields of a JSON line that differ between two equal runs
SKIPPED = (".stdout", ".stderr", ".json", "-journal", "-wal", "-shm")  # not the run's state
REAL_CONNECT = sqlite3.connect  # bound before any commit watch wraps it
UNREADABLE = "not SQLite, not text"  # a file whose contents the explorer cannot judge
WRITING = set("wax+")  # the letters of a mode that opens a file for writing
NOT_FILES = ("/dev/", "/proc/", "/sys/")  # written to, but nothing of them survives a crash
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


class CrashPoints:
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
    replayed by a worker that runs to it instead)."""

    def __init__(self, job: dict, trace: Trace, reader_files: Iterable[str]) -> None:
        self.job, self.run_dir, self.trace = job, job["run_dir"], trace
        self.plan, self.kill_mode = job.get("crash_at"), job.get("kill_mode", "sigkill")
        self.gate = Gate(trace, job)  # step mode: pause at each point for the parent
        self.recording = job["role"] == "record"
        self.fork_to = job.get("fork_to") if self.recording else None
        self.forked: set[str] = set()  # the crash states a fork was killed in already
        self.dying: dict[int, int] = {}  # the forks killed and not reaped yet: pid -> point
        self.next_commit: tuple[str, str, str] | None = None  # (op, what, file): a service's
        self.reader_files = set(reader_files)
        self.count = 0
        self.armed = False  # set-up (the files' tables, the nodes' context) is no crash point
        self.seen: dict[tuple[str, str], int] = {}
        self.watch: CommitWatch | None = None
        self.outside: set[str] = set()  # files opened for writing outside the run folder
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
            if self.recording and self.fork_to:  # a step's crash states, told apart
                with hold or contextlib.nullcontext():
                    fields["state"] = state_digest(self.run_dir)
            self.trace.note("point", point=str(self.count), **fields)  # the matrix's number
            if "state" in fields and fields["state"] not in self.forked and self.alone():
                self.forked.add(fields["state"])
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
        unseen = sorted(changed - self.pointed - set(ignored))
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
        still tears it down (a few ms, on another core); it is reaped at the next fork, or by
        `reap`, and its exit status noted then."""
        self.reap()
        sys.stdout.flush()  # nothing buffered may be written twice, once by each process
        sys.stderr.flush()
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
        for frame in frames:
            file = frame.f_code.co_filename
            if file in self.reader_files or readers_own(file):
                return f"{os.path.basename(file)}:{frame.f_lineno}"
        return None

    def watch_commits(self, ignore: Iterable[str] = ()) -> CommitWatch:
        """A crash point after every commit to a SQLite file of the run folder (but `ignore`)."""

        def committed(file: str) -> None:
            self.pointed.update(file.split(" and "))
            named = self.next_commit  # a service's commit to come (a claim: `services`)
            if named and named[2] in file.split(" and "):
                self.next_commit = None
                self.hit(named[0], named[1])  # at the reader's call into the service
            else:
                self.hit("commit", file, watch.committed_at)

        watch = CommitWatch(self.run_dir, None, committed, self.trace, self.locate)
        for name in ignore:
            watch.ignore(name)
        watch.opened = self.opened_database
        watch.watch_process()
        self.watch = watch
        return watch

    def watch_outside(self) -> None:
        """A recovery's watch: no crash points (it is never armed), but a file opened for
        writing outside the run folder, or a Postgres write, is noted all the same."""
        self.watch_writes()
        self.watch_descriptor_writes()
        watch_postgres_writes(self.note_outside, postgres_run(self.job))  # psycopg preloaded

    def watch_files(self) -> None:
        """A crash point after every write to a file in the run folder and every fsync of one;
        a file opened for writing outside it is noted."""
        self.watch_fsync()
        self.watch_writes()
        self.watch_descriptor_writes()

    def watch_descriptor_writes(self) -> None:
        """The same for a file written below Python's file objects: `os.open` for writing,
        then `os.write`, `os.pwrite` or `os.writev` on its descriptor (a crash point after each
        that wrote a byte), until `os.close`."""
        real_open, real_close = os.open, os.close
        files: dict[int, str] = {}  # descriptor -> the run file it is open on

        def watched_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
            fd = real_open(path, flags, *args, **kwargs)
            if (
                self.quiet
                or not flags & (os.O_WRONLY | os.O_RDWR)
                or lab_file(os.path.basename(os.fsdecode(path)))
            ):
                return fd
            real = (
                os.path.realpath(os.fsdecode(path), strict=False)
                if not kwargs.get("dir_fd")
                else None
            )
            if real is None or os.path.basename(real) == TRACE_FILE:
                return fd
            if self.inside(real):
                files[fd] = os.path.relpath(real, self._real_dir)
            else:
                self.note_outside(real)
            return fd

        def watched(write: Callable[..., int]) -> Callable[..., int]:
            @functools.wraps(write)
            def written(fd: int, *args: object) -> int:
                count = write(fd, *args)
                if count and fd in files and not self.quiet:
                    self.wrote("write", files[fd], fd)
                return count

            return written

        def watched_close(fd: int) -> None:
            files.pop(fd, None)
            real_close(fd)

        os.open, os.close = watched_open, watched_close
        os.write, os.pwrite, os.writev = map(watched, (os.write, os.pwrite, os.writev))

    def watch_writes(self) -> None:
        """Every file this process opens for writing (`open`, `io.open`, `pathlib`,
        `os.fdopen`): in the run folder, a crash point each time its bytes reach the kernel;
        outside it, noted."""
        real_open = io.open

        def watched_open(file: object, mode: str = "r", *args: object, **kwargs: object) -> object:
            opened = real_open(file, mode, *args, **kwargs)
            if self.quiet or WRITING.isdisjoint(mode):
                return opened
            path = opened_path(file)
            if (
                path is None
                or os.path.basename(path) == TRACE_FILE
                or lab_file(os.path.basename(path))
            ):
                return opened
            if not self.inside(path):
                self.note_outside(path)
                return opened
            name = os.path.relpath(path, self._real_dir)
            return WrittenFile(opened, lambda: self.wrote("write", name, opened.fileno()))

        builtins.open = io.open = watched_open

    def opened_database(self, database: object) -> None:
        """A SQLite connection opened `database`: noted if it is a file outside the run folder
        opened for writing (not `:memory:`, not `?mode=ro`)."""
        if not isinstance(database, (str, bytes, os.PathLike)):
            return
        name = os.fsdecode(database)
        if name.startswith("file:"):
            name, _, query = name[len("file:") :].partition("?")
            if "mode=ro" in query or "mode=memory" in query:
                return
        if name and name != ":memory:" and not self.inside(os.path.realpath(name)):
            self.note_outside(os.path.realpath(name))

    def inside(self, path: str) -> bool:
        return path == self._real_dir or path.startswith(self._real_dir + os.sep)

    def note_outside(self, path: str) -> None:
        """A write outside the run folder: into the trace once per file (not /dev/null's)."""
        if path.startswith(NOT_FILES) or self.quiet:
            return
        with self._lock:
            if path not in self.outside:
                self.outside.add(path)
                self.trace.note("outside", file=path, where=self.locate())

    def watch_fsync(self) -> None:
        """A crash point after every `os.fsync` of a file in the run folder (not the trace)
        that makes something new durable: an fsync of bytes a write's point already saw
        leaves, after a kill, the very files that point left (a kill keeps the page cache)."""
        real_fsync = os.fsync

        def fsync(fd: int) -> None:
            real_fsync(fd)
            number = fd if isinstance(fd, int) else fd.fileno()  # any object with fileno()
            path = os.fstat(number).st_ino != self._trace_inode and run_file(number, self.run_dir)
            if path and self.marks.get(os.path.basename(path)) != mark(number):
                if self.watch is not None:
                    self.watch.observe()  # the commits made before it come first
                self.wrote("fsync", os.path.basename(path), number)

        os.fsync = fsync


class WrittenFile:
    """A file of the run open for writing, as the reader's code holds it: after each call
    that may hand its bytes to the kernel (a write that fills the buffer, `flush`, `close`),
    a crash point if it did: from then on they survive a kill."""

    def __init__(self, opened: io.IOBase, written: Callable[[], None]) -> None:
        self._opened, self._written = opened, written
        self._mark = self.mark()

    def mark(self) -> tuple[int, int, int]:
        """What changes when bytes reach the file: its size, its time, the kernel's offset."""
        fd = self._opened.fileno()
        return *mark(fd), os.lseek(fd, 0, os.SEEK_CUR)

    def reached(self) -> None:
        if not self._opened.closed and self.mark() != self._mark:
            self._mark = self.mark()
            self._written()

    def write(self, data: object) -> int:
        written = self._opened.write(data)
        self.reached()
        return written

    def writelines(self, lines: Iterable) -> None:
        self._opened.writelines(lines)
        self.reached()

    def flush(self) -> None:
        self._opened.flush()
        self.reached()

    def close(self) -> None:
        if not self._opened.closed:
            self.flush()
        self._opened.close()

    def __enter__(self) -> WrittenFile:
        return self

    def __exit__(self, *error: object) -> None:
        self.close()

    def __iter__(self) -> Iterator:
        return self

    def __next__(self) -> object:
        return next(self._opened)

    def __getattr__(self, name: str) -> object:
        return getattr(self._opened, name)


def opened_path(file: object) -> str | None:
    """The real path of what `open` was given (a path, or a descriptor), or None."""
    try:
        if isinstance(file, int):
            return os.readlink(f"/proc/self/fd/{file}")
        return os.path.realpath(os.fsdecode(file))
    except (OSError, TypeError, ValueError):
        return None


@functools.cache
def readers_own(file: str) -> bool:
    """A file of the reader's own: a real file outside the lab, Python and its packages."""
    if file.startswith("<"):  # <frozen ...>, <string>: no file of anyone's
        return False
    path = os.path.realpath(file)
    return not path.startswith(NOT_READERS) and os.path.isfile(path)


def skip_disk_waits() -> None:
    """The explorer kills processes, never the machine: what a process wrote survives its kill
    whether or not the disk was waited for (only a power cut tells). So its workers do not wait
    (as eatmydata does for test suites): `os.fsync` returns at once and every SQLite connection
    runs with `synchronous=OFF`, whatever the code sets. The crash states are the same;
    exploring them is many times faster. A crash point after an fsync is still one."""
    os.fsync = lambda fd: None
    plain_connect = sqlite3.connect

    def connect(*args: object, **kwargs: object) -> sqlite3.Connection:
        db = plain_connect(*args, **kwargs)
        db.execute("PRAGMA synchronous=OFF")
        db.set_authorizer(keep_synchronous_off)  # a later PRAGMA synchronous=FULL is ignored
        return db

    sqlite3.connect = connect


def keep_synchronous_off(action: int, name: str | None, value: str | None, *_: object) -> int:
    """SQLite's authorizer: a statement that sets `synchronous` is ignored, all else allowed."""
    if action == sqlite3.SQLITE_PRAGMA and name == "synchronous" and value is not None:
        return sqlite3.SQLITE_IGNORE
    return sqlite3.SQLITE_OK


def run_file(fd: int, run_dir: str) -> str | None:
    """The path of the run folder's file open as `fd`, or None if it is another file."""
    try:
        path = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return path if os.path.dirname(path) == os.path.realpath(run_dir) else None


def mark(fd: int) -> tuple[int, int]:
    """What changes when bytes reach a file: its size and its time of change."""
    status = os.fstat(fd)
    return status.st_size, status.st_mtime_ns


def copy_files(run_dir: str, folder: str) -> None:
    """Every file of the run as it is now (a journal too: it is the state) into `folder`, and
    the trace with its worker's events said to be the first worker's."""
    for name in os.listdir(run_dir):
        path = os.path.join(run_dir, name)
        if name == TRACE_FILE:
            with open(path, "rb") as trace:
                events = trace.read().replace(b'"role": "record"', b'"role": "first"')
            with open(os.path.join(folder, name), "wb") as copy:
                copy.write(events)
        elif lab_file(name):
            continue
        elif os.path.isdir(path):
            shutil.copytree(path, os.path.join(folder, name))
        else:
            shutil.copyfile(path, os.path.join(folder, name))


def lab_file(name: str) -> bool:
    """A file of the lab's own in a run folder: a folder's marker, a worker's output."""
    return name.startswith(".") or name.endswith((".stdout", ".stderr", ".json"))


def stack_of(frame: object) -> Iterator:
    """A thread's frames, from `frame` outwards."""
    while frame is not None:
        yield frame
        frame = frame.f_back


def read_state(run_dir: str) -> dict:
    """What the run folder holds: every table of every SQLite file (rows in rowid order) and
    every line of every other file the run wrote, JSON lines without their pid and time."""
    state: dict[str, object] = {}
    for name in sorted(os.listdir(run_dir)):
        path = os.path.join(run_dir, name)
        if name == TRACE_FILE or name.startswith(".") or name.endswith(SKIPPED):
            continue  # the lab's own: the trace, a folder's marker, a worker's output
        if not os.path.isfile(path):
            continue
        state[name] = read_tables(path) if is_database(path) else read_lines(path)
    return state


def is_database(path: str) -> bool:
    """A SQLite file, whatever its name: known by its header."""
    return read_file(path, len(HEADER)) == HEADER


def unreadable(state: dict) -> list[str]:
    """The files of a state that are neither SQLite nor text: their crash states go unjudged."""
    return [name for name, content in state.items() if content == UNREADABLE]


def read_tables(path: str) -> dict[str, list[list]]:
    """Every user table of one SQLite file (its WAL included), through a connection of its own."""
    db = REAL_CONNECT(path, isolation_level=None)
    try:
        # the last connection to a WAL file checkpoints it as it closes: without waiting for
        # the disk (the state is the same; `skip_disk_waits` says why), not 10 ms a file
        db.execute("PRAGMA synchronous=OFF")
        names = db.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
        return {
            name: [[plain(v) for v in row] for row in db.execute(f'SELECT * FROM "{name}"')]
            for (name,) in names
        }
    except sqlite3.DatabaseError:  # not a database (yet): an empty or foreign file
        return {}
    finally:
        db.close()


def plain(value: object) -> object:
    """A column value as JSON can carry it: a blob as its SHA-256 (a checkpoint's bytes)."""
    if isinstance(value, bytes):
        return "sha256:" + hashlib.sha256(value).hexdigest()[:16]
    return value


def read_lines(path: str) -> list | str:
    """A file's lines: JSON lines as dicts without VOLATILE fields, other lines as text;
    UNREADABLE if it is not text."""
    try:
        with open(path, encoding="utf-8") as lines:
            return [without_volatile(line.rstrip("\n")) for line in lines if line.strip()]
    except UnicodeDecodeError:
        return UNREADABLE


def without_volatile(line: str) -> object:
    try:
        record = json.loads(line)
    except ValueError:
        return line
    if isinstance(record, dict):
        return {k: v for k, v in record.items() if k not in VOLATILE}
    return record


def state_digest(run_dir: str) -> str:
    """A short fingerprint of `read_state`: equal crash states, equal digests."""
    text = json.dumps(read_state(run_dir), sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
