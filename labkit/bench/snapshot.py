"""What the SQLite files hold, read back through a new read-only connection.

A snapshot never trusts the worker's memory or its output: it opens each file afresh, as a
recovering process would, and copies every row of every table. It changes no file of the run:
what the crash left is the recovery's to find.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from labkit.bench.errors import check_instance, refusal
from labkit.bench.own_names import LABS_OWN
from labkit.bench.sql_names import quoted

__all__ = ["Snapshot", "Table", "read_only", "read_tables", "snapshot_folder", "take_snapshot"]

# Each table and whether it may lack a rowid (a WITHOUT ROWID table; a false "yes" only drops
# the ORDER BY). sqlite_master rather than pragma_table_list: that needs SQLite 3.37.
LIST_TABLES = (
    "SELECT name, sql LIKE '%without%rowid%' FROM sqlite_master"
    " WHERE type='table' AND name NOT LIKE 'sqlite_%'"
)


@dataclass
class Table:
    columns: list[str]
    rows: list[list]


@dataclass
class Snapshot:
    """Every table of every file; `done` and `receipts` are the two numbers study 000 reads."""

    files: dict[str, dict[str, Table]] = field(default_factory=dict)

    def table(self, name: str) -> Table:
        """The table called `name`, in whichever file holds it."""
        for tables in self.files.values():
            if name in tables:
                return tables[name]
        raise KeyError(name)

    @property
    def done(self) -> int:
        return self.table("progress").rows[0][1]

    @property
    def receipts(self) -> int:
        return len(self.table("receipts").rows)

    @property
    def rows(self) -> dict[str, dict[str, list[list]]]:
        """file -> table -> rows, without the column names."""
        return {f: {t: tab.rows for t, tab in tables.items()} for f, tables in self.files.items()}

    def counts(self) -> dict[str, int]:
        return {"done": self.done, "receipts": self.receipts}

    def to_json(self) -> dict:
        files = {
            name: {t: {"columns": tab.columns, "rows": tab.rows} for t, tab in tables.items()}
            for name, tables in self.files.items()
        }
        return {**self.counts(), "files": files}


@contextlib.contextmanager
def read_only(path: Path | str) -> Iterator[sqlite3.Connection]:
    """A connection that reads the SQLite file at `path` as the next process to open it sees it.

    A process killed inside a transaction leaves a hot journal beside the file (the pages as
    they were before it): whoever opens the file next rolls it back first, which a read-only
    connection may not do. Then the file and its journal are copied to a folder of the lab's
    beside them and read there, where the copy is rolled back: the run's own files stay as the
    crash left them, for its recovery to find."""
    path = Path(path)
    uri = path.absolute().as_uri()  # percent-escaped: a '#' or '?' in a name stays a name
    with contextlib.closing(sqlite3.connect(f"{uri}?mode=ro", uri=True)) as db:
        if not hot_journal(db):
            yield db
            return
    with contextlib.ExitStack() as stack:
        try:
            folder = tempfile.mkdtemp(prefix=f"{LABS_OWN}rolled-back-", dir=path.parent)
            stack.callback(shutil.rmtree, folder)
            copy = rolled_back_copy(path, folder)
        except OSError as error:  # a folder the reader may not write in, a full disk
            raise refusal("sqlite_half_written", file=str(path), reason=error.strerror) from None
        yield stack.enter_context(contextlib.closing(sqlite3.connect(copy)))


def hot_journal(db: sqlite3.Connection) -> bool:
    """Whether a read-only connection's file waits for a crashed transaction's rollback (its
    first read of the schema says so)."""
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as error:
        if getattr(error, "sqlite_errorname", None) == "SQLITE_READONLY_ROLLBACK":
            return True
        raise
    return False


def rolled_back_copy(path: Path, folder: str) -> str:
    """A copy of the file at `path` and its hot journal in `folder`: the copy's path."""
    copy = os.path.join(folder, path.name)
    for suffix in ("", "-journal"):
        shutil.copyfile(f"{path}{suffix}", f"{copy}{suffix}")
    return copy


def read_tables(path: Path) -> dict[str, Table]:
    """Every user table of one SQLite file, rows in rowid order (a WITHOUT ROWID table: in
    primary-key order). A file SQLite cannot read is one line that names it and says why."""
    try:
        with read_only(path) as db:
            tables = {}
            for name, without_rowid in db.execute(LIST_TABLES):
                order = "" if without_rowid else " ORDER BY rowid"
                cursor = db.execute(f"SELECT * FROM {quoted(name)}{order}")
                columns = [d[0] for d in cursor.description]
                tables[name] = Table(columns, [list(row) for row in cursor])
            return tables
    except sqlite3.Error as error:  # corrupt, unreadable, a WAL file in a read-only folder
        if getattr(error, "sqlite_errorname", None) == "SQLITE_NOTADB":  # a stray file
            raise refusal("not_sqlite", file=str(path)) from None
        raise refusal("sqlite_unreadable", file=str(path), said=str(error)) from None


def take_snapshot(run_dir: Path, files: tuple[str, ...]) -> Snapshot:
    return Snapshot({name: read_tables(Path(run_dir) / name) for name in files})


def snapshot_folder(run_dir: Path | str) -> Snapshot:
    """Every SQLite file (*.db) in a run folder: the state viewer for any run, old or new."""
    folder = Path(check_instance("run_dir", run_dir, str | os.PathLike, "folder_path"))
    if os.fspath(run_dir) == "":  # Path("") is the current folder: a slip, not a choice
        raise refusal("run_folder_empty")
    try:  # inside another user's private folder (their runs home), even a look is refused
        is_folder, exists = folder.is_dir(), folder.exists()
    except OSError as error:
        raise refusal("folder_unreadable", folder=str(folder), reason=error.strerror) from None
    if not is_folder:
        code = "run_folder_is_a_file" if exists else "run_folder_missing"
        raise refusal(code, folder=str(folder))
    if not os.access(folder, os.R_OK | os.X_OK):  # else it would look empty
        raise refusal("folder_unreadable", folder=str(folder), reason=os.strerror(errno.EACCES))
    files = tuple(sorted(p.name for p in folder.glob("*.db") if p.is_file()))
    if not files:
        raise refusal("no_sqlite_files", folder=str(run_dir))
    return take_snapshot(folder, files)
