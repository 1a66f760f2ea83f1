"""The explorer's workers do not wait for the disk: it kills processes, never the machine.
Worker-side: standard library only.
"""

from __future__ import annotations

import os
import sqlite3

__all__ = ["keep_synchronous_off", "skip_disk_waits"]


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
