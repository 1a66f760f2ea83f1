"""The explorer's crash points, numbered in this process (issue 33: the mutants mutmut left in
studies/explorer/record.py's CrashPoints). A worker numbers them where no test can look; here
one `CrashPoints` is driven by hand over a real run folder and its trace, and a planned kill
happens in a fork, whose exit status the test reads.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import sys

import pytest

from labkit.bench.gate import EXIT_CODE
from labkit.bench.own_names import LabsOwnFile
from labkit.bench.trace import Trace, read_trace
from labkit.studies.explorer.record import CrashPoints, point_folder


@pytest.fixture(autouse=True)
def no_psycopg(monkeypatch):
    """`arm` watches psycopg's cursors where it is imported: not in the tests' own process."""
    monkeypatch.delitem(sys.modules, "psycopg", raising=False)


def crash_points(run_dir, role: str = "record", **job) -> CrashPoints:
    trace = Trace(run_dir, role)
    return CrashPoints({"run_dir": str(run_dir), "role": role, **job}, trace, [])


def points(run_dir) -> list[tuple]:
    return [
        (e["n"], e["op"], e["detail"], e["nth"])
        for e in read_trace(run_dir)
        if e["event"] == "point"
    ]


def test_points_are_numbered_after_the_set_up_with_how_many_times_each_came(tmp_path):
    cp = crash_points(tmp_path)
    cp.hit("commit", "set-up.db")  # before arm: the set-up, no crash point
    assert points(tmp_path) == [] and cp.count == 0
    cp.arm()  # no commit watch: nothing to observe
    cp.hit("commit", "effect.db")
    cp.hit("write", "out.log")
    cp.hit("commit", "effect.db")
    cp.hit("fsync", "synced.log", said={"code": "x"})
    assert points(tmp_path) == [
        (1, "commit", "effect.db", 1),
        (2, "write", "out.log", 1),
        (3, "commit", "effect.db", 2),
        (4, "fsync", "synced.log", 1),
    ]
    assert [e.get("said") for e in read_trace(tmp_path)] == [None, None, None, {"code": "x"}]
    assert [e["point"] for e in read_trace(tmp_path)] == ["1", "2", "3", "4"]
    here = {e["where"].split(":")[0] for e in read_trace(tmp_path)}
    assert here == {"test_crash_points.py"}  # the innermost line of code not the lab's
    cp.hit("commit", "effect.db", where="steps.py:7")
    assert read_trace(tmp_path)[-1]["where"] == "steps.py:7"
    assert cp.pointed == {"out.log", "synced.log"}  # files a write or fsync came after
    assert cp.seen == {
        ("commit", "effect.db"): 3,
        ("write", "out.log"): 1,
        ("fsync", "synced.log"): 1,
    }


def test_a_point_in_a_process_the_readers_code_forked_is_none(tmp_path):
    cp = crash_points(tmp_path)
    cp.arm()
    cp.pid = os.getpid() + 1  # as if this were a fork of the worker
    cp.hit("commit", "effect.db")
    assert points(tmp_path) == [] and cp.count == 0


def test_a_written_file_is_marked_and_a_write_outside_noted_once(tmp_path):
    cp = crash_points(tmp_path)
    cp.arm()
    with open(tmp_path / "out.log", "w") as out:
        out.write("abc")
        out.flush()
        cp.wrote("write", "out.log", out.fileno())
    assert cp.marks["out.log"][0] == 3 and points(tmp_path) == [(1, "write", "out.log", 1)]
    cp.note_outside("/elsewhere/a.db")
    cp.note_outside("/elsewhere/a.db")
    cp.note_outside("/dev/null")
    noted = [(e["file"], e["where"]) for e in read_trace(tmp_path) if e["event"] == "outside"]
    assert [file for file, _ in noted] == ["/elsewhere/a.db"] and cp.outside == {"/elsewhere/a.db"}
    assert noted[0][1].startswith("test_crash_points.py:"), noted
    assert cp.inside(str(os.path.realpath(tmp_path) + "/x")) and not cp.inside("/elsewhere")


def test_only_a_recording_notes_a_file_changed_without_a_point(tmp_path):
    replay = crash_points(tmp_path, role="first", fork_to=str(tmp_path / "x"))
    assert (replay.recording, replay.fork_to) == (False, None)
    replay.arm()
    (tmp_path / "out.log").write_text("changed\n")
    replay.note_changes_without_a_point()
    record = crash_points(tmp_path)
    record.arm()
    (tmp_path / "other.log").write_text("changed\n")
    (tmp_path / "seen.log").write_text("changed\n")
    record.hit("write", "seen.log")
    record.note_changes_without_a_point(ignored=["ignored.log"])
    unwatched = [e for e in read_trace(tmp_path) if e["event"] == "unwatched"]
    assert [(e["files"], e["reason"]) for e in unwatched] == [(["other.log"], "no_point")]


def test_step_mode_pauses_at_a_point_and_the_gate_says_so(tmp_path):
    notify_r, notify_w = os.pipe()
    resume_r, resume_w = os.pipe()
    os.write(resume_w, b"go\n")  # the parent's answer, already there
    try:
        cp = crash_points(
            tmp_path,
            pause_at=["crash point 2"],
            exit_at="crash point 9",  # never reached: a gate told no name must not exit
            notify_fd=notify_w,
            resume_fd=resume_r,
        )
        cp.arm()
        cp.hit("commit", "a.db")
        cp.hit("commit", "b.db")
        os.set_blocking(notify_r, False)  # said already, or never: no wait for it
        assert os.read(notify_r, 64) == b"crash point 2\n"
    finally:
        for fd in (notify_r, notify_w, resume_r, resume_w):
            os.close(fd)
    gate = [e["point"] for e in read_trace(tmp_path) if e["event"] == "point" and "n" not in e]
    assert gate == ["crash point 2"]


def in_a_session_of_its_own(scenario) -> int:
    """Run `scenario` in a fork that leads a session of its own, and return how it ended: a
    broken fork (a mutant's `os.kill(0, ...)`) kills that session only, never the test run."""
    child = os.fork()
    if child == 0:  # pragma: no cover - the fork
        code = 1
        try:
            os.setsid()
            scenario()
            code = 0
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])


def dies_at(tmp_path, plan: dict, hits: int, **job) -> tuple[int, list]:
    """A fork hits `hits` commits of effect.db with `plan`: how it ended, the points noted."""

    def scenario() -> None:
        cp = crash_points(tmp_path, role="first", crash_at=plan, **job)
        cp.arm()
        for _ in range(hits):
            cp.hit("commit", "effect.db")

    unplanned = tmp_path / "unplanned"  # the same calls in this process, planned elsewhere
    unplanned.mkdir()
    here = crash_points(unplanned, role="first", crash_at={**plan, "detail": "other.db"}, **job)
    here.die = lambda: pytest.fail("died at a point it did not plan")  # not the test process
    here.arm()
    here.hit("commit", "effect.db")
    assert points(unplanned) == [(1, "commit", "effect.db", 1)]
    return in_a_session_of_its_own(scenario), points(tmp_path)


@pytest.mark.parametrize(
    ("mode", "code"), [({}, -signal.SIGKILL), ({"kill_mode": "exit"}, EXIT_CODE)]
)
def test_a_planned_point_kills_the_worker_there_and_only_there(tmp_path, mode, code):
    plan = {"op": "commit", "detail": "effect.db", "nth": 2}
    assert dies_at(tmp_path, plan, 3, **mode) == (code, [(1, "commit", "effect.db", 1)])
    other = tmp_path / "other-plan"
    other.mkdir()
    unplanned = {"op": "commit", "detail": "control.db", "nth": 1}
    assert dies_at(other, unplanned, 2, **mode)[0] == 0


@pytest.mark.parametrize(
    ("job", "mode", "code"),
    [({}, "sigkill", -signal.SIGKILL), ({"kill_mode": "exit"}, "exit", EXIT_CODE)],
)
def test_a_recording_crashes_a_fork_at_each_new_crash_state(tmp_path, job, mode, code):
    run_dir, explored = tmp_path / "run", tmp_path / "explored"
    run_dir.mkdir()
    explored.mkdir()
    db = sqlite3.connect(run_dir / "effect.db")
    db.execute("CREATE TABLE t (x)")
    db.commit()

    unforked = tmp_path / "unforked"  # the same calls in this process, without a fork
    unforked.mkdir()
    alone = crash_points(unforked, **job)
    alone.arm()
    alone.hit("commit", "effect.db")
    alone.reap()
    assert points(unforked) == [(1, "commit", "effect.db", 1)]

    def scenario() -> None:
        cp = crash_points(run_dir, fork_to=str(explored), **job)
        cp.arm()
        db.execute("INSERT INTO t VALUES (1)")
        db.commit()
        cp.hit("commit", "effect.db")
        cp.hit("commit", "effect.db")  # the same state: no second fork
        cp.note_outside("/elsewhere/after-a-fork.db")  # the lab is quiet only while it copies
        db.execute("INSERT INTO t VALUES (2)")
        db.commit()
        cp.hit("commit", "effect.db")
        cp.reap()
        assert cp.dying == {}

    assert in_a_session_of_its_own(scenario) == 0
    db.close()
    assert sorted(os.listdir(explored)) == ["point-001", "point-003"]
    first = point_folder(str(explored), 1)
    kill = [e for e in read_trace(first) if e["event"] == "kill"]
    assert [(k["point"], k["mode"], k["role"]) for k in kill] == [("crash point 1", mode, "first")]
    forked = [e for e in read_trace(run_dir) if e["event"] == "forked"]
    assert sorted((e["n"], e["code"]) for e in forked) == [(1, code), (3, code)]
    assert {e["parent"] for e in forked} == {os.getpid()}  # the recording's parent: this test
    assert [e["pid"] for e in forked if e["n"] == 1] == [k["pid"] for k in kill] != [None]
    killed = {  # each fork's pid, as its folder's kill and as its reaping say it
        n: [e["pid"] for e in read_trace(point_folder(str(explored), n)) if e["event"] == "kill"]
        for n in (1, 3)
    }
    assert {e["n"]: [e["pid"]] for e in forked} == killed
    outside = [e["file"] for e in read_trace(run_dir) if e["event"] == "outside"]
    assert outside == ["/elsewhere/after-a-fork.db"]
    copied = sqlite3.connect(os.path.join(first, "effect.db"))
    assert copied.execute("SELECT x FROM t").fetchall() == [(1,)]
    copied.close()


def test_an_fsync_is_a_point_when_it_makes_something_new_of_a_run_file(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "fsync", os.fsync)  # watch_fsync replaces it: put back after
    cp = crash_points(tmp_path)
    cp.arm()
    cp.watch_fsync()
    cp.trace.event("mine")  # the trace's own fsync: no point
    with open(tmp_path / "out.log", "w") as out, open(tmp_path.parent / "else.log", "w") as other:
        out.write("a")
        out.flush()
        os.fsync(out.fileno())
        os.fsync(out)  # any object with fileno(), and nothing new: no second point
        other.write("b")
        other.flush()
        os.fsync(other.fileno())  # not a file of the run
    assert points(tmp_path) == [(1, "fsync", "out.log", 1)]


def test_a_descriptor_opened_for_writing_keeps_its_mode_and_each_write_is_a_point(
    tmp_path, monkeypatch
):
    for name in ("open", "close", "write", "pwrite", "writev"):  # the watch replaces them
        monkeypatch.setattr(os, name, getattr(os, name))
    cp = crash_points(tmp_path)
    cp.arm()
    cp.watch_descriptor_writes()
    fd = os.open(tmp_path / "d.log", os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"x")
    os.write(fd, b"")  # nothing written: no point
    os.close(fd)
    outside = os.open(tmp_path.parent / "d-outside.log", os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(outside, b"y")
    os.close(outside)
    folder = os.open(tmp_path, os.O_RDONLY)
    try:  # a path relative to a folder's descriptor: not followed, neither watched nor noted
        relative = os.open("rel.log", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=folder)
        os.close(relative)
    finally:
        os.close(folder)
    (tmp_path / "x.stderr").write_bytes(b"")  # a worker's output comes as a pair: the lab's
    with pytest.raises(LabsOwnFile):  # refused to the reader's code, before it is opened
        os.open(tmp_path / "x.stdout", os.O_WRONLY | os.O_CREAT, 0o600)
    assert not (tmp_path / "x.stdout").exists()
    Trace(tmp_path.parent, "fork").note("point")  # the lab's trace of another run folder
    (tmp_path / "logs").mkdir()  # in a folder of the run folder, the lab's names are the reader's
    readers = os.open(tmp_path / "logs" / "trace.jsonl", os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(readers, b"{}\n")
    os.close(readers)
    assert os.stat(tmp_path / "d.log").st_mode & 0o777 == 0o600
    assert (tmp_path / "rel.log").exists()
    assert points(tmp_path) == [(1, "write", "d.log", 1), (2, "write", "logs/trace.jsonl", 1)]
    noted = [e["file"] for e in read_trace(tmp_path) if e["event"] == "outside"]
    assert noted == [os.path.realpath(tmp_path.parent / "d-outside.log")]


def test_a_file_opened_for_writing_in_the_run_folder_is_watched_and_one_outside_noted(
    tmp_path, monkeypatch
):
    import builtins
    import io

    monkeypatch.setattr(builtins, "open", builtins.open)  # the watch replaces them
    monkeypatch.setattr(io, "open", io.open)
    cp = crash_points(tmp_path)
    cp.arm()
    cp.watch_writes()
    with open(tmp_path / "w.log", "w", -1, "latin-1") as out:  # opened as asked
        out.write("é")
    with open(tmp_path / "w.log", "rb") as back:  # read only: not watched
        assert back.read() == b"\xe9"
    (tmp_path / "x.stderr").write_text("")
    for lab in ("trace.jsonl", "x.stdout"):  # the lab's trace and a worker's output: refused
        with pytest.raises(LabsOwnFile), open(tmp_path / lab, "a"):
            pass
    with open(tmp_path / "trace.jsonl") as trace:  # read: as any file
        assert trace.read()
    with open(tmp_path.parent / "w-outside.log", "w") as elsewhere:
        elsewhere.write("b")
    assert points(tmp_path) == [(1, "write", "w.log", 1)]
    noted = [e["file"] for e in read_trace(tmp_path) if e["event"] == "outside"]
    assert noted == [os.path.realpath(tmp_path.parent / "w-outside.log")]
    with open(tmp_path / "w.log", "r+", encoding="latin-1") as both:  # read as the file itself
        assert list(both) == ["é"]


@pytest.mark.parametrize(
    ("database", "noted"),
    [
        ("/elsewhere/a.db", True),
        ("file:/elsewhere/b.db?cache=shared", True),
        ("file:/elsewhere/c.db?mode=ro", False),
        ("file:/elsewhere/e.db?mode=ro&x=?", False),
        ("file:/elsewhere/d.db?mode=memory", False),
        (":memory:", False),
        ("", False),
        (3, False),
    ],
)
def test_a_database_opened_outside_the_run_folder_for_writing_is_noted(tmp_path, database, noted):
    cp = crash_points(tmp_path)
    cp.opened_database(database)
    cp.opened_database(str(tmp_path / "inside.db"))
    files = [e["file"] for e in read_trace(tmp_path) if e["event"] == "outside"]
    name = database.removeprefix("file:").split("?")[0] if isinstance(database, str) else ""
    assert files == ([os.path.realpath(name)] if noted else [])
