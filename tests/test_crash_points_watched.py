"""Crash points a worker finds where `test_crash_points.py` does not look (issue 33: the mutants
the 2026-12-05 mutation run of studies/explorer/record.py left alive): a commit to the run's
own Postgres schema, a point on a thread that runs none of the reader's code, a graph's points
forked each, a step's file named like a worker's report in a folder of its own. psycopg is a
stand-in here: the watch only calls its classes' methods, and a real server is
`test_postgres*.py`'s (outside record.py's guards).
"""

from __future__ import annotations

import os
import sys
import threading
import types

import pytest

from labkit.bench import gate
from labkit.bench.own_names import LabsOwnFile
from labkit.bench.trace import read_trace
from tests.test_crash_points import (
    crash_points,
    in_a_session_of_its_own,
    no_psycopg,  # noqa: F401 - autouse: arm sees no real psycopg
    points,
)


def fake_psycopg() -> types.SimpleNamespace:
    """What `watch_postgres_writes` wraps of psycopg: a cursor's statement sets its status
    (the statement's first word), and a connection is idle (autocommit) after each."""

    class Connection:
        def __init__(self, dbname: str, user: str) -> None:
            self.info = types.SimpleNamespace(
                dbname=dbname, user=user, options="", transaction_status=0
            )

        def commit(self) -> None:
            pass

        def rollback(self) -> None:
            pass

    class Cursor:
        def __init__(self, connection: Connection) -> None:
            self.connection, self.statusmessage = connection, None

        def execute(self, query: str, *args: object) -> Cursor:
            self.statusmessage = query.split()[0]
            return self

        executemany = execute

    class Transaction:
        def __exit__(self, *args: object) -> None:
            pass

        async def __aexit__(self, *args: object) -> None:
            pass

    return types.SimpleNamespace(
        Connection=Connection,
        Cursor=Cursor,
        Transaction=Transaction,
        AsyncConnection=type("AsyncConnection", (Connection,), {}),
        AsyncCursor=type("AsyncCursor", (Cursor,), {}),
        AsyncTransaction=type("AsyncTransaction", (Transaction,), {}),
    )


RUN = {"run_schema": {"database": "shop", "schema": "run_7", "url": "postgresql:///shop"}}


def test_a_commit_to_the_runs_postgres_schema_is_a_point_and_another_database_noted(
    tmp_path, monkeypatch
):
    psycopg = fake_psycopg()
    monkeypatch.setitem(sys.modules, "psycopg", psycopg)
    cp = crash_points(tmp_path, **RUN)
    cp.arm()  # the reader's code imported psycopg: its commits to the run's schema are points
    psycopg.Cursor(psycopg.Connection("shop", "run_7")).execute("INSERT INTO orders VALUES (1)")
    psycopg.Cursor(psycopg.Connection("stock", "reader")).execute("UPDATE items SET n = 0")
    psycopg.Cursor(psycopg.Connection("shop", "run_7")).execute("SELECT 1")  # wrote nothing
    assert points(tmp_path) == [(1, "commit", "Postgres database shop", 1)]
    noted = [e["file"] for e in read_trace(tmp_path) if e["event"] == "outside"]
    assert noted == ["Postgres database stock"]


def test_a_recoverys_postgres_write_outside_its_run_is_noted_and_its_own_is_no_point(
    tmp_path, monkeypatch
):
    import builtins
    import io

    for name in ("open", "close", "write", "pwrite", "writev"):  # the watch replaces them
        monkeypatch.setattr(os, name, getattr(os, name))
    monkeypatch.setattr(builtins, "open", builtins.open)
    monkeypatch.setattr(io, "open", io.open)
    psycopg = fake_psycopg()
    monkeypatch.setitem(sys.modules, "psycopg", psycopg)
    cp = crash_points(tmp_path, role="recovery", **RUN)
    cp.watch_outside()  # never armed: no crash points, but writes outside are noted
    psycopg.Cursor(psycopg.Connection("shop", "run_7")).execute("INSERT INTO orders VALUES (1)")
    psycopg.Cursor(psycopg.Connection("stock", "reader")).execute("DELETE FROM items")
    assert points(tmp_path) == []
    noted = [e["file"] for e in read_trace(tmp_path) if e["event"] == "outside"]
    assert noted == ["Postgres database stock"]


def test_a_point_on_a_thread_is_at_the_readers_line_on_it_or_where_their_code_waits(tmp_path):
    cp = crash_points(tmp_path)
    cp.arm()

    def readers_thread() -> None:  # this file is the reader's code: its own line
        cp.hit("commit", "a.db")

    thread = threading.Thread(target=readers_thread)
    thread.start()
    thread.join()

    def waits():  # a coroutine of theirs, waiting for the thread's commit
        yield

    waiting = waits()
    next(waiting)
    cp.suspended = lambda: [waiting.gi_frame]
    lab_only = threading.Thread(target=cp.hit, args=("commit", "b.db"))  # none of theirs
    lab_only.start()
    lab_only.join()
    where = {e["detail"]: e["where"] for e in read_trace(tmp_path) if e["event"] == "point"}
    line = readers_thread.__code__.co_firstlineno + 1
    assert where == {
        "a.db": f"test_crash_points_watched.py:{line}",
        "b.db": f"test_crash_points_watched.py:{waits.__code__.co_firstlineno + 1}",
    }


def in_the_explored(explored) -> list[str]:
    return sorted(os.listdir(explored)) if os.path.isdir(explored) else []


@pytest.mark.parametrize("fork_each", [True, False])
def test_a_graphs_points_are_each_forked_though_their_files_are_equal(tmp_path, fork_each):
    run_dir, explored = tmp_path / "run", tmp_path / "explored"
    run_dir.mkdir()
    explored.mkdir()
    (run_dir / "out.log").write_text("the same\n")
    alone = crash_points(tmp_path, fork_each=fork_each)
    assert (alone.fork_to, alone.fork_each) == (None, False)  # no fork without `fork_to`
    alone.arm()
    alone.hit("commit", "effect.db")
    assert in_the_explored(explored) == []

    def scenario() -> None:
        cp = crash_points(run_dir, fork_to=str(explored), fork_each=fork_each)
        assert cp.fork_each is fork_each
        cp.arm()
        cp.hit("write", "out.log")
        cp.hit("write", "out.log")  # the same files: a step's second point is no new state
        cp.reap()

    assert in_a_session_of_its_own(scenario) == 0
    states = [e.get("state") for e in read_trace(run_dir) if e["event"] == "point"]
    if fork_each:
        assert in_the_explored(explored) == ["point-001", "point-002"]
        assert states == [None, None]  # not read: each point is its own
    else:
        assert in_the_explored(explored) == ["point-001"]
        assert states[0] == states[1] and states[0] is not None  # read, and equal


def test_a_report_named_file_in_a_sub_folder_is_the_runs_own_however_it_is_written(
    tmp_path, monkeypatch
):
    """A worker's `first.json` is the lab's beside its `first.stderr`; the step's
    `sub/first.json` has no `first.stderr` beside it: each write of it is a crash point."""
    import builtins
    import io

    for name in ("open", "close", "write", "pwrite", "writev"):  # the watches replace them
        monkeypatch.setattr(os, name, getattr(os, name))
    monkeypatch.setattr(builtins, "open", builtins.open)
    monkeypatch.setattr(io, "open", io.open)
    monkeypatch.chdir(tmp_path)  # a worker's current folder is its run folder
    (tmp_path / "first.stderr").write_text("")
    (tmp_path / "sub").mkdir()
    cp = crash_points(tmp_path, role="first")
    cp.arm()
    cp.watch_writes()
    cp.watch_descriptor_writes()
    with open(tmp_path / "sub" / "first.json", "w") as out:
        out.write("{}")
    fd = os.open(tmp_path / "sub" / "first.json", os.O_WRONLY)
    os.write(fd, b"[]")
    os.close(fd)
    with pytest.raises(LabsOwnFile), open(tmp_path / "first.json", "w"):  # the reader's code
        pass
    with gate.OPEN(tmp_path / "first.json", "w") as report:  # as the lab writes it: no point
        report.write("{}")
    mine = os.path.join("sub", "first.json")
    assert points(tmp_path) == [(1, "write", mine, 1), (2, "write", mine, 2)]


def test_a_file_read_through_a_descriptor_is_neither_a_point_nor_noted(tmp_path, monkeypatch):
    for name in ("open", "close", "write", "pwrite", "writev"):  # the watch replaces them
        monkeypatch.setattr(os, name, getattr(os, name))
    (tmp_path / "in.log").write_text("x")
    (tmp_path.parent / "read-outside.log").write_text("y")
    cp = crash_points(tmp_path)
    cp.arm()
    cp.watch_descriptor_writes()
    for path in (tmp_path / "in.log", tmp_path.parent / "read-outside.log"):
        fd = os.open(path, os.O_RDONLY)
        assert os.read(fd, 8) in (b"x", b"y")
        os.close(fd)
    assert [e["event"] for e in read_trace(tmp_path)] == []


def test_the_labs_trace_is_never_the_target_of_the_readers_rename(tmp_path, monkeypatch):
    """The atomic-save recipe aimed at `trace.jsonl`, the lab's trace at the top of the run
    folder: refused before the rename, so the lab's record of the run stays whole; a
    `trace.jsonl` in a folder of the run folder is the reader's, and its rename a point."""
    from labkit.studies.explorer.renames import watch_renames

    monkeypatch.setattr(os, "replace", os.replace)  # the watch replaces them
    monkeypatch.setattr(os, "rename", os.rename)
    cp = crash_points(tmp_path)
    cp.arm()
    watch_renames(cp)
    (tmp_path / "new.tmp").write_text('{"sent": 1}\n')
    labs = (tmp_path / "trace.jsonl").stat().st_ino
    with pytest.raises(LabsOwnFile):
        os.replace(tmp_path / "new.tmp", tmp_path / "trace.jsonl")
    assert (tmp_path / "new.tmp").exists() and (tmp_path / "trace.jsonl").stat().st_ino == labs
    (tmp_path / "logs").mkdir()
    os.replace(tmp_path / "new.tmp", tmp_path / "logs" / "trace.jsonl")
    assert points(tmp_path) == [(1, "write", os.path.join("logs", "trace.jsonl"), 1)]
