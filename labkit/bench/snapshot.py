"""What the SQLite files hold, read back through a new read-only connection.

A snapshot never trusts the worker's memory or its output: it opens each file afresh, as a
recovering process would, and copies every row of every table.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from labkit.bench.errors import check_instance, refusal
from labkit.bench.sql_names import quoted

__all__ = ["Snapshot", "Table", "read_tables", "snapshot_folder", "take_snapshot"]

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


def read_tables(path: Path) -> dict[str, Table]:
    """Every user table of one SQLite file, rows in rowid order (a WITHOUT ROWID table: in
    primary-key order). A file SQLite cannot read is one line that names it and says why."""
    uri = Path(path).absolute().as_uri()  # percent-escaped: a '#' or '?' in a name stays a name
    try:
        with contextlib.closing(sqlite3.connect(f"{uri}?mode=ro", uri=True)) as db:
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
