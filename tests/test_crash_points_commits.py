"""The crash points of a worker's SQLite commits, seen by `watch_commits` in this process (issue
33: the watch mutants the 2026-12-05 mutation run of studies/explorer/watches.py left to tests
the recording's guards did not run). The watch replaces sqlite3's connections: each test puts
them back.
"""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from labkit.bench.trace import read_trace
from tests.test_crash_points import (
    crash_points,
    no_psycopg,  # noqa: F401 - autouse: arm sees no real psycopg
    points,
)


@pytest.fixture(autouse=True)
def sqlite_put_back(monkeypatch):
    import _sqlite3

    for module in (sqlite3, sqlite3.dbapi2, _sqlite3):
        monkeypatch.setattr(module, "connect", module.connect)
        monkeypatch.setattr(module, "Connection", module.Connection)


def watched(tmp_path, **ignore):
    cp = crash_points(tmp_path)
    cp.watch_commits(**ignore)
    cp.arm()
    return cp


def alone(work):
    """`work()`'s result, from a fork of this process: its only thread. The watch takes a COMMIT
    over two files for one commit only in a process's only thread, and this one may hold
    threads that earlier tests of its xdist worker left (a panel's, asyncio's waitpid)."""
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read)
        try:
            os.write(write, json.dumps(work()).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        said = pipe.read()
    os.waitpid(child, 0)
    return json.loads(said)


def test_one_commit_over_two_files_is_one_point_that_names_both(tmp_path):
    def commit_over_two_files():
        cp = watched(tmp_path)
        db = sqlite3.connect(tmp_path / "a b.db", isolation_level=None)
        db.execute("ATTACH DATABASE ? AS other", (str(tmp_path / "c.db"),))
        db.execute("CREATE TABLE t (x)")
        db.execute("CREATE TABLE other.u (y)")
        db.execute("BEGIN")
        db.execute("INSERT INTO t VALUES (1)")
        db.execute("INSERT INTO other.u VALUES (2)")
        db.execute("COMMIT")
        cp.next_commit = ("claim", "ticket 7", "a b.db")  # a service's commit, named at its call
        db.execute("BEGIN")
        db.execute("INSERT INTO t VALUES (3)")
        db.execute("INSERT INTO other.u VALUES (4)")
        db.execute("COMMIT")
        db.close()
        return sorted(cp.pointed), cp.next_commit

    pointed, next_commit = alone(commit_over_two_files)
    found = [  # the two files of one commit in the order the folder lists them
        (n, op, sorted(detail.split(" and ")), nth) for n, op, detail, nth in points(tmp_path)
    ]
    assert found == [
        (1, "commit", ["a b.db"], 1),
        (2, "commit", ["c.db"], 1),
        (3, "commit", ["a b.db", "c.db"], 1),
        (4, "claim", ["ticket 7"], 1),
    ]
    assert pointed == ["a b.db", "c.db"] and next_commit is None


def test_a_commit_seen_at_a_later_statement_is_at_the_line_that_made_it(tmp_path):
    watched(tmp_path)
    db = sqlite3.connect(tmp_path / "e.db", isolation_level=None)
    db.execute("CREATE TABLE t (x)")
    cursor = db.cursor()  # a cursor's statement: seen at the next one
    cursor.execute("INSERT INTO t VALUES (1)")
    made = test_a_commit_seen_at_a_later_statement_is_at_the_line_that_made_it
    line = made.__code__.co_firstlineno + 5  # the cursor's INSERT
    db.execute("SELECT 1")
    db.close()
    where = [e["where"] for e in read_trace(tmp_path) if e["event"] == "point"]
    assert where[1] == f"test_crash_points_commits.py:{line}", where


def test_two_commits_seen_at_once_are_unwatched_in_the_trace(tmp_path):
    unwatched_db = sqlite3.connect(tmp_path / "e.db", isolation_level=None)  # opened before
    unwatched_db.execute("CREATE TABLE t (x)")
    cp = watched(tmp_path)
    unwatched_db.execute("INSERT INTO t VALUES (1)")  # no statement of it is traced
    unwatched_db.execute("INSERT INTO t VALUES (2)")
    unwatched_db.close()
    cp.watch.observe()
    assert points(tmp_path) == []
    unwatched = [e for e in read_trace(tmp_path) if e["event"] == "unwatched"]
    assert [(e["files"], e.get("commits")) for e in unwatched] == [(["e.db"], 2)], unwatched


def test_an_ignored_file_has_no_commit_points_and_a_database_outside_is_noted(tmp_path):
    cp = watched(tmp_path, ignore=["checkpoints.db"])
    saver = sqlite3.connect(tmp_path / "checkpoints.db", isolation_level=None)
    saver.execute("CREATE TABLE c (x)")
    saver.close()
    elsewhere = tmp_path.parent / f"{tmp_path.name}-outside.db"
    sqlite3.connect(elsewhere).close()
    assert points(tmp_path) == []
    noted = [e["file"] for e in read_trace(tmp_path) if e["event"] == "outside"]
    assert noted == [str(elsewhere.resolve())] and cp.watch is not None


def test_a_commit_to_a_database_in_a_folder_of_the_run_is_a_point_named_by_its_path(tmp_path):
    watched(tmp_path)
    (tmp_path / "data").mkdir()
    shop = sqlite3.connect(tmp_path / "data" / "shop.db", isolation_level=None)
    shop.execute("CREATE TABLE orders (id)")
    shop.close()
    assert [detail for _, op, detail, _ in points(tmp_path) if op == "commit"] == [
        os.path.join("data", "shop.db")
    ]
