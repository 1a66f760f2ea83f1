"""One SQLite file as a worker writes it: every transaction traced, with the rows it wrote.

`with store:` is one transaction (BEGIN IMMEDIATE … COMMIT, or ROLLBACK if the block raised),
and its begin and commit go into the run's trace together with the rows written in between
(each study's store says what it writes with `wrote`), so a timeline can show what each file
held at any moment. Worker-side: standard library only.
"""

from __future__ import annotations

import os
import sqlite3

from labkit.bench.trace import Trace

__all__ = ["TracedStore", "connect"]


def connect(path: str | os.PathLike) -> sqlite3.Connection:
    """A connection in autocommit mode, so that every transaction is one we opened ourselves."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous=FULL")
    return db


class TracedStore:
    """One SQLite file as a worker sees it; `with store:` is one traced transaction."""

    def __init__(self, run_dir: str, name: str, trace: Trace) -> None:
        self.name = name
        self.db = connect(os.path.join(run_dir, name))
        self._trace = trace
        self._writes: list[dict] = []

    def __enter__(self) -> TracedStore:
        self.db.execute("BEGIN IMMEDIATE")
        self._trace.event("begin", file=self.name)
        self._writes = []
        return self

    def __exit__(self, error_type: type | None, *_: object) -> None:
        """COMMIT, or ROLLBACK if the block raised (the exception goes on)."""
        if error_type is None:
            self.db.execute("COMMIT")
            self._trace.event("commit", file=self.name, writes=self._writes)
        else:
            self.db.execute("ROLLBACK")
            self._trace.event("rollback", file=self.name, error=error_type.__name__)

    def wrote(self, table: str, op: str, row: dict) -> None:
        """Say what this transaction wrote: the trace's commit event carries it."""
        self._writes.append({"table": table, "op": op, "row": row})

    def close(self) -> None:
        self.db.close()
