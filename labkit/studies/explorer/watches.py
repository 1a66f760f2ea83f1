"""Where a worker's writes become crash points, or are noted: the watches of `CrashPoints`.

A crash point comes after each commit to a SQLite file of the run (the bench's commit watch,
however the reader writes it), each write that reaches a file in the run folder, fsynced or
not, through a file object or a descriptor (`os.write`), each file or folder of it made,
emptied or removed, and each `os.fsync` of one that makes something new durable. A file or a
database opened for writing outside the run folder is noted ("outside"). `Watches` is a mixin
of `record.CrashPoints`, whose state it uses (the run folder, the trace, the lock, `hit` and
`locate`). Worker-side: standard library only.
"""

from __future__ import annotations

import builtins
import functools
import io
import os
import weakref
from collections.abc import Callable, Iterable

from labkit.bench.commit_watch import CommitWatch
from labkit.bench.own_names import LabsOwnFile, labs_own_name
from labkit.studies.explorer.postgres_runs import postgres_run
from labkit.studies.explorer.postgres_writes import watch_postgres_writes
from labkit.studies.explorer.states import ignored_file, labs_own_file, run_folder
from labkit.studies.explorer.written_file import WrittenFile, mark

__all__ = ["Watches", "opened_path", "run_file"]

WRITING = set("wax+")  # the letters of a mode that opens a file for writing
NOT_FILES = ("/dev/", "/proc/", "/sys/")  # written to, but nothing of them survives a crash
IN_MEMORY = ("/dev/shm/", "/dev/mqueue/")  # but these files outlive a process that is killed


class Watches:
    """The watches a worker sets before the reader's code runs (a mixin of CrashPoints)."""

    # files outside the run folder whose writes are no write outside: the explorer's job names
    # them by the absolute patterns of `ignore_files` (a log elsewhere); a lesson's, none
    outside_ignored: tuple[str, ...] = ()
    open_files: Iterable = ()  # the run's files open for writing (`watch_writes` keeps them)

    def watch_commits(self, ignore: Iterable[str] = ()) -> CommitWatch:
        """A crash point after every commit to a SQLite file of the run folder or of a folder
        of it (but `ignore`)."""

        def committed(file: str) -> None:
            self.pointed.update(file.split(" and "))
            named = self.next_commit  # a service's commit to come (a claim: `services`)
            if named and named[2] in file.split(" and "):
                self.next_commit = None
                self.hit(named[0], named[1])  # at the reader's call into the service
            else:
                self.hit("commit", file, watch.committed_at)

        watch = CommitWatch(self.run_dir, None, committed, self.trace, self.locate, run_folder)
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
        """A crash point after every write to a file in the run folder, every fsync of one and
        every file or folder of it made, emptied or removed; a file opened for writing outside
        it is noted."""
        from labkit.studies.explorer.renames import watch_renames

        self.watch_fsync()
        self.watch_writes()
        self.watch_descriptor_writes()
        self.watch_made_and_removed()
        watch_renames(self)

    def watch_descriptor_writes(self) -> None:
        """The same for a file written below Python's file objects: `os.open` for writing,
        then `os.write`, `os.pwrite` or `os.writev` on its descriptor (a crash point after each
        that wrote a byte), until `os.close`."""
        real_open, real_close = os.open, os.close
        # descriptor -> the run file it is open on, and that file's (device, inode): a file
        # object that took the descriptor (tempfile's `_io.open(fd)`) closes it without
        # `os.close`, and the number comes back for another file
        files: dict[int, tuple[str, tuple[int, int]]] = {}

        def watched_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
            writing = flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC)
            if writing and kwargs.get("dir_fd") is None:
                self.refuse_labs_own(path)
            fd = real_open(path, flags, *args, **kwargs)
            if self.quiet or not flags & (os.O_WRONLY | os.O_RDWR):
                return fd
            real = (
                os.path.realpath(os.fsdecode(path), strict=False)
                if not kwargs.get("dir_fd")
                else None
            )
            if real is None or self.labs_own(real):
                return fd
            if self.inside(real):
                files[fd] = os.path.relpath(real, self._real_dir), file_id(fd)
            else:
                self.note_outside(real)
            return fd

        def watched(write: Callable[..., int]) -> Callable[..., int]:
            @functools.wraps(write)
            def written(fd: int, *args: object) -> int:
                count = write(fd, *args)
                if count and fd in files and not self.quiet:
                    name, opened = files[fd]
                    if file_id(fd) == opened:
                        self.wrote("write", name, fd)
                    else:  # closed by another hand, the number given to another file
                        del files[fd]
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
        self.open_files = weakref.WeakSet()

        def watched_open(file: object, mode: str = "r", *args: object, **kwargs: object) -> object:
            if not WRITING.isdisjoint(mode):
                self.refuse_labs_own(file)
            opened = real_open(file, mode, *args, **kwargs)
            if self.quiet or WRITING.isdisjoint(mode):
                return opened
            # by its descriptor: `file` may be a folder, with an opener that makes the file in it
            # (tempfile.NamedTemporaryFile)
            path = opened_path(opened.fileno())
            if path is None or self.labs_own(path):
                return opened
            if not self.inside(path):
                self.note_outside(path)
                return opened
            name = os.path.relpath(path, self._real_dir)
            written = WrittenFile(opened, lambda: self.wrote("write", name, opened.fileno()))
            self.open_files.add(written)
            return written

        builtins.open = io.open = watched_open

    def close_open_files(self) -> None:
        """Close the run's files the reader's code left open, as Python does when a program
        exits (a worker ends with `os._exit`, which does not): the bytes still in a buffer
        (an audit file opened at import, written and never flushed) reach the file, a crash
        point, as in the program they would."""
        for file in list(self.open_files):
            file.close()

    def watch_made_and_removed(self) -> None:
        """A crash point after every file of the run folder made or emptied by an open for
        writing (`open(path, "w")`, `Path.touch`, `os.open` with O_CREAT or O_TRUNC), even if
        nothing is written to it, and after every file or folder of it made or removed
        (`os.mkdir`, `os.remove`, `os.unlink`, `os.rmdir`): an empty marker is a state a kill
        leaves, as a file's bytes are. Set after `watch_writes` and `watch_descriptor_writes`,
        so that the point of a file made comes before the points of the bytes written to it.
        Its points are writes, as the lessons' judges number them ("after write 1 (sent.flag)")."""
        real_open, real_os_open = io.open, os.open

        def run_name(path: object) -> str | None:
            """The name of a file of the run folder at `path` (not the lab's own), or None."""
            real = None if isinstance(path, int) else opened_path(path)
            if self.quiet or real is None or real == self._real_dir or not self.inside(real):
                return None
            return None if self.labs_own(real) else os.path.relpath(real, self._real_dir)

        def size(path: object) -> int | None:
            try:
                return os.stat(path).st_size
            except (OSError, TypeError, ValueError):
                return None

        def made_open(file: object, mode: str = "r", *args: object, **kwargs: object) -> object:
            name = None if WRITING.isdisjoint(mode) else run_name(file)
            before = size(file) if name else None
            opened = real_open(file, mode, *args, **kwargs)
            if name and (before is None or ("w" in mode and before > 0)):
                self.hit("write", name)
            return opened

        def made_os_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
            changes = flags & (os.O_CREAT | os.O_TRUNC) and kwargs.get("dir_fd") is None
            name = run_name(path) if changes else None
            before = size(path) if name else None
            fd = real_os_open(path, flags, *args, **kwargs)
            made = before is None and flags & os.O_CREAT
            if name and (made or (flags & os.O_TRUNC and before)):
                self.hit("write", name)
            return fd

        def watched(change: Callable[..., None]) -> Callable[..., None]:
            @functools.wraps(change)
            def changed(path: object, *args: object, **kwargs: object) -> None:
                by_path = kwargs.get("dir_fd") is None
                if by_path:
                    self.refuse_labs_own(path)  # its trace removed, the lab would see no point
                name = run_name(path) if by_path else None
                change(path, *args, **kwargs)
                if name:
                    self.hit("write", name)

            return changed

        builtins.open = io.open = made_open
        os.open = made_os_open
        os.mkdir, os.rmdir, os.remove, os.unlink = map(
            watched, (os.mkdir, os.rmdir, os.remove, os.unlink)
        )

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

    def refuse_labs_own(self, file: object) -> None:
        """Raise `LabsOwnFile` where the reader's code would write or remove one of the lab's
        files at the top of the run folder that keep names readers see (its trace, a worker's
        output or report), before it does: the lab writes those through calls bound before any
        watch (`trace.OPEN`, `gate.OPEN`), and its `.labkit-` files are left to it."""
        path = None if self.quiet or isinstance(file, int) else opened_path(file)
        name = os.path.basename(path) if path else ""
        if path and self.labs_own(path) and not labs_own_name(name):
            raise LabsOwnFile(name)

    def labs_own(self, path: str) -> bool:
        """Whether the file at `path` (a real path) is one of the lab's own in the run folder
        (`states.labs_own_file`), whose writes are no state of the reader's."""
        return labs_own_file(self._real_dir, os.path.relpath(path, self._real_dir))

    def inside(self, path: str) -> bool:
        return path == self._real_dir or path.startswith(self._real_dir + os.sep)

    def note_outside(self, path: str) -> None:
        """A write outside the run folder: into the trace once per file (not /dev/null's, but
        a file of /dev/shm's: a killed process leaves it behind as it leaves /tmp's; nor one
        the reader named as no effect by its absolute path, `ignore_files`)."""
        if (path.startswith(NOT_FILES) and not path.startswith(IN_MEMORY)) or self.quiet:
            return
        if ignored_file(path, self.outside_ignored):
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


def opened_path(file: object) -> str | None:
    """The real path of what `open` was given (a path, or a descriptor), or None."""
    try:
        if isinstance(file, int):
            return os.readlink(f"/proc/self/fd/{file}")
        return os.path.realpath(os.fsdecode(file))
    except (OSError, TypeError, ValueError):
        return None


def file_id(fd: int) -> tuple[int, int]:
    """The file open as `fd`: its device and inode, whatever descriptor it has now."""
    status = os.fstat(fd)
    return status.st_dev, status.st_ino


def run_file(fd: int, run_dir: str) -> str | None:
    """The path of the run folder's file open as `fd`, or None if it is another file."""
    try:
        path = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return path if os.path.dirname(path) == os.path.realpath(run_dir) else None
