"""The commit watch: a kill point after every commit a process makes to a run's SQLite files,
however the code that makes it is written.

A reader's code (a lesson's exercise, a step or graph given to the crash explorer) is code the
lab did not write, so the lab cannot know where its commits are: the watch finds them by
reading the run's SQLite files before every statement of every connection the process opens.
Used by study 000's exercises (`commit_window.learner`) and by the crash explorer
(`studies/explorer`). Worker-side: standard library only.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable, Iterable

from labkit.bench.trace import Trace

__all__ = ["CommitWatch", "ConnectionState", "commits_between", "read_file"]

Locate = Callable[[], "str | None"]  # where the code being watched is now (file:line), if known


class CommitWatch:
    """Calls `on_commit(file)` once after every commit that changed one of the run's files,
    however it was made: through a Store or a connection of the reader's own, in any thread,
    with or without `with` blocks, whatever trace callback the reader set.

    It watches the files, not the connections: a commit that changes a SQLite file in
    rollback-journal mode adds one to the change counter in the file's header; in WAL mode it
    appends a commit frame to the `-wal` file beside it (`wal_commits`). The files are
    read before every statement of every connection this process opens (`watch_process` has
    SQLite's trace callback call `before_statement`) and once when the step returns, so the kill
    point after a commit comes before anything else can reach a file. What it cannot crash
    apart goes into the trace as "unwatched", for the judge to refuse: two commits seen at
    once (made where no statement is traced, or in two threads), a change the counter did not
    count (an exclusive lock, a write that is not SQLite's), a `-wal` file it cannot read.
    A checkpoint (`wal_checkpoint`, the one SQLite runs at 1000 pages, the last close) copies
    committed pages back into the file: no commit. One transaction over an ATTACHed file
    commits both files in one statement: one commit, if nothing else ran before the call that
    committed it returned.
    """

    def __init__(
        self,
        run_dir: str,
        files: Iterable[str] | None,
        on_commit: Callable[[str], None],
        trace: Trace,
        locate: Locate | None = None,
        folders: Callable[[str], bool] | None = None,
    ) -> None:
        import threading  # only a reader's code is watched: the built-in orders never pay for it

        self._run_dir, self._ignored = run_dir, set()
        self._discover = files is None  # None: every SQLite file of the folder, as it appears
        # discovering, whether a folder of the folder (its path in it) holds files of the run
        self._folders = folders or (lambda name: False)
        self._not_sqlite: set[str] = set()  # files of the folder that hold something else
        self._paths = {name: os.path.join(run_dir, name) for name in files or ()}
        if self._discover:
            self._paths = self.new_files()  # those there before the watch: no commit of theirs
        self._on_commit, self._trace, self._locate = on_commit, trace, locate
        self.committed_at: str | None = None  # where the statement that made a commit ran
        self._lock = threading.RLock()  # one observation at a time, whichever thread asks
        self._alone = lambda: threading.active_count() == 1
        self._files = {name: read_file(path) for name, path in self._paths.items()}
        self._wal_seen: set[str] = set()
        # a WAL file's position: its salt and commit frames (`wal_position`), None unreadable
        self._wals: dict[str, tuple[bytes, int] | None] = {}
        self.wal_commits()  # the frames a WAL held before the watch are no commits of the run
        self._committing: ConnectionState | None = None  # its COMMIT was the latest statement
        self._ran = True  # a statement may have run since the files were last read
        self.opened: Callable[[object], None] | None = None  # told each database a connection opens

    def before_statement(self, sql: str, connection: ConnectionState) -> None:
        """SQLite is about to run `sql` on `connection`: report the commits made before it."""
        with self._lock:
            connection.attached = connection.attached or bool(ATTACH.match(sql))
            if self._ran:  # else the files were read when the last statement's call returned
                self.observe()
            self._ran = True
            commits = connection.attached and COMMIT.match(sql)
            self._committing = connection if commits else None
            if self._locate is not None:  # this statement may be the next commit's
                self.committed_at = self._locate()

    def after_call(self, connection: ConnectionState) -> None:
        """A call on `connection` returned: if the latest statement was its COMMIT of a
        transaction over ATTACHed files, in the process's only thread, report it as one."""
        with self._lock:
            self.observe(one_statement=self._committing is connection and self._alone())

    def observe(self, one_statement: bool = False) -> None:
        """Report the commits made since the last observation (`one_statement`: they were
        made by one statement; only then may they reach two files and be one commit)."""
        with self._lock:
            if self._discover:
                self._paths.update(self.new_files())
            before = {name: self._files.get(name, b"") for name in self._paths}
            self._files = {n: read_file(p) for n, p in self._paths.items()}
            if self._discover:
                self.drop_other_files()
            self._committing, self._ran = None, False
            commits = {
                name: commits_between(before[name], data)
                for name, data in self._files.items()
                if data != before[name] and not in_wal_mode(data)
            }
            commits.update(self.wal_commits())
            if not commits:
                return
            if set(commits.values()) == {1} and (len(commits) == 1 or one_statement):
                self._on_commit(" and ".join(commits))
            elif None in commits.values():
                self._trace.event("unwatched", files=list(commits), reason="uncounted")
            else:
                self._trace.event("unwatched", files=list(commits), commits=sum(commits.values()))

    def wal_commits(self) -> dict[str, int | None]:
        """The commits made to each file in WAL mode since the last look: they reach its
        `-wal` file, not the file (whose pages a checkpoint copies back later, no commit),
        one commit frame each. A `-wal` file it cannot read goes into the trace, once."""
        found = {}
        for name, data in self._files.items():
            if not in_wal_mode(data):
                continue
            now = wal_position(read_file(self._paths[name] + "-wal"))
            before, self._wals[name] = self._wals.get(name, (b"", 0)), now
            if now is None:
                if name not in self._wal_seen:
                    self._wal_seen.add(name)
                    self._trace.event("unwatched", files=[name], reason="wal")
            elif before is not None and now != before:  # the same salt: frames added
                found[name] = now[1] - before[1] if now[0] == before[0] else now[1]
        return {name: count for name, count in found.items() if count}

    def ignore(self, name: str) -> None:
        """Leave a file of the folder alone (a checkpointer's, whose commits are its own points)."""
        with self._lock:
            self._ignored.add(name)
            self._paths.pop(name, None)
            self._files.pop(name, None)

    def new_files(self, folder: str = "") -> dict[str, str]:
        """The SQLite files that appeared in the folder (or in a folder of it that `folders`
        accepts, by their path there: "audit/audit.db") since the last look, whatever their
        names (travel2.sqlite, orders.db, a file without a suffix): known by their header.
        An empty file may become one (SQLite creates it at `connect`): watched until it holds
        something else. In the order of their names, so that what is said of them (the commits
        it could not crash apart) does not depend on the order a folder lists them in."""
        found = {}
        for entry in sorted(os.listdir(os.path.join(self._run_dir, folder))):
            name = os.path.join(folder, entry)
            if name in self._paths or name in self._ignored or name in self._not_sqlite:
                continue
            path = os.path.join(self._run_dir, name)
            if os.path.isdir(path) and not os.path.islink(path) and self._folders(name):
                found.update(self.new_files(name))
            elif name.endswith(NOT_DATABASES) or not os.path.isfile(path):
                self._not_sqlite.add(name)
            elif HEADER.startswith(read_file(path, len(HEADER))):
                found[name] = path
            else:
                self._not_sqlite.add(name)
        return found

    def drop_other_files(self) -> None:
        """Stop reading files found empty that now hold something else than a database."""
        for name, data in list(self._files.items()):
            if data and not data.startswith(HEADER):
                self._not_sqlite.add(name)
                self._paths.pop(name)
                self._files.pop(name)

    def watch_process(self) -> None:
        """From now on every SQLite connection this process opens, in any thread and however
        (`sqlite3.connect`, `sqlite3.Connection`, a factory of its own), tells the watch before
        each statement; `set_trace_callback` adds the caller's callback after the watch's."""
        import _sqlite3

        watch = self

        class WatchedConnection(sqlite3.Connection):
            def __init__(self, *args: object, **kwargs: object) -> None:
                self._watched = ConnectionState()
                super().__init__(*args, **kwargs)
                if watch.opened is not None:
                    watch.opened(args[0] if args else kwargs.get("database"))
                self.set_trace_callback(None)

            def set_trace_callback(self, callback: Callable[[str], object] | None) -> None:
                state = self._watched  # not self: a connection must not keep itself alive

                def before(sql: str) -> None:
                    watch.before_statement(sql, state)
                    if callback is not None:
                        callback(sql)

                super().set_trace_callback(before)

            def execute(self, *args: object, **kwargs: object) -> sqlite3.Cursor:
                cursor = super().execute(*args, **kwargs)
                watch.after_call(self._watched)
                return cursor

            def executemany(self, *args: object, **kwargs: object) -> sqlite3.Cursor:
                cursor = super().executemany(*args, **kwargs)
                watch.after_call(self._watched)
                return cursor

            def executescript(self, *args: object, **kwargs: object) -> sqlite3.Cursor:
                cursor = super().executescript(*args, **kwargs)
                watch.after_call(self._watched)
                return cursor

            def commit(self) -> None:
                super().commit()
                watch.after_call(self._watched)

            def __exit__(self, *error: object) -> bool:
                handled = super().__exit__(*error)
                watch.after_call(self._watched)
                return handled

        watched = {sqlite3.Connection: WatchedConnection}

        def watched_factory(factory: type) -> type:
            if not issubclass(factory, WatchedConnection):
                if factory not in watched:
                    name = f"Watched{factory.__name__}"
                    watched[factory] = type(name, (WatchedConnection, factory), {})
                factory = watched[factory]
            return factory

        real_connect = sqlite3.connect

        def connect(*args: object, **kwargs: object) -> sqlite3.Connection:
            if len(args) > FACTORY_ARGUMENT:  # factory given by position
                factory = watched_factory(args[FACTORY_ARGUMENT])
                args = (*args[:FACTORY_ARGUMENT], factory, *args[FACTORY_ARGUMENT + 1 :])
            else:
                kwargs["factory"] = watched_factory(kwargs.get("factory", sqlite3.Connection))
            return real_connect(*args, **kwargs)

        for module in (sqlite3, sqlite3.dbapi2, _sqlite3):
            module.connect, module.Connection = connect, WatchedConnection


class ConnectionState:
    """What the watch knows of one connection: whether it ATTACHed another file."""

    attached = False


ATTACH = re.compile(r"\s*ATTACH\b", re.IGNORECASE)
COMMIT = re.compile(r"\s*(COMMIT|END|RELEASE)\b", re.IGNORECASE)
FACTORY_ARGUMENT = 5  # sqlite3.connect(database, timeout, detect_types, isolation_level,
# check_same_thread, factory, ...): the position of `factory`
HEADER = b"SQLite format 3\0"
WAL_HEADER, WAL_FRAME = 32, 24  # the sizes of a -wal file's header and of a frame's header
NOT_DATABASES = ("-journal", "-wal", "-shm", ".jsonl")  # a database's companions, the traces


def read_file(path: str, size: int | None = None) -> bytes:
    """All of a file as it is now, or its first `size` bytes (b"" if it is gone); a run's
    files hold a few pages."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return b""
    try:
        return os.pread(fd, os.fstat(fd).st_size if size is None else size, 0)
    finally:
        os.close(fd)


def in_wal_mode(data: bytes) -> bool:
    """Whether a SQLite file's header says WAL mode (its read version, byte 18, is 2)."""
    return data[18:19] == b"\2"


def wal_position(wal: bytes) -> tuple[bytes, int] | None:
    """A `-wal` file's salt and how many commit frames it holds under that salt (a frame
    whose "database size after commit" is not 0); (b"", 0) for no file, None for one that is
    no WAL. A checkpoint that starts the file again gives it a new salt: frames of the old
    salt left behind are no longer the WAL's."""
    if not wal:
        return b"", 0
    if len(wal) < WAL_HEADER or wal[:4] not in (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83"):
        return None
    page, salt = int.from_bytes(wal[8:12], "big"), wal[16:24]
    commits, frame = 0, WAL_HEADER
    while frame + WAL_FRAME + page <= len(wal) and wal[frame + 8 : frame + 16] == salt:
        commits += wal[frame + 4 : frame + 8] != b"\0\0\0\0"
        frame += WAL_FRAME + page
    return salt, commits


def commits_between(old: bytes, new: bytes) -> int | None:
    """How many commits turned a SQLite file from `old` into `new`: how far the change counter
    (4 bytes, big-endian, at offset 24) moved; None if the counter did not count the change
    (an exclusive lock counts only its first commit; a write that is not SQLite's) or either
    is not a database; an empty `old` is a file that did not exist yet."""
    if not new.startswith(HEADER) or (old and not old.startswith(HEADER)):
        return None
    counted = int.from_bytes(old[24:28], "big") if old else 0  # a new file: from nothing
    moved = int.from_bytes(new[24:28], "big") - counted
    return moved if moved > 0 else None
