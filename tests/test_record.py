"""What the explorer's recording reads of a run folder, on folders written out by hand (issue
33: the mutants mutmut left in studies/explorer/record.py). The states it reads are what the
checker judges and what tells two crash states apart: each test asserts what it reads, to the
row and the line.
"""

from __future__ import annotations

import dbm.dumb
import hashlib
import json
import os
import pickle
import shelve
import sqlite3
from decimal import Decimal

import pytest

from labkit.bench.home import MARKER
from labkit.bench.own_names import LABS_OWN
from labkit.studies.explorer.disk_waits import keep_synchronous_off, skip_disk_waits
from labkit.studies.explorer.record import copy_files, readers_own
from labkit.studies.explorer.states import (
    is_database,
    kept_in,
    lab_file,
    plain,
    read_lines,
    read_state,
    read_tables,
    state_digest,
    unreadable,
    without_volatile,
)
from labkit.studies.explorer.watches import opened_path, run_file
from labkit.studies.explorer.written_file import WrittenFile, mark


def a_database(path, *statements: str) -> None:
    db = sqlite3.connect(path)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()


@pytest.fixture
def run_dir(tmp_path):
    """A run folder as a worker leaves it: a database, a log of lines, the lab's own files."""
    folder = tmp_path / "run"
    folder.mkdir()
    a_database(
        folder / "effect.db",
        "CREATE TABLE receipts (id INTEGER PRIMARY KEY, op_key TEXT, body BLOB)",
        "INSERT INTO receipts VALUES (2, 'b', x'00ff')",
        "INSERT INTO receipts VALUES (1, 'a', NULL)",
    )
    (folder / "outbox.log").write_text('{"pid": 7, "t_ns": 9, "sent": 1}\nplain text\n\n[1, 2]\n')
    for lab in ("trace.jsonl", MARKER, "w.stdout", "w.stderr", "w.json"):
        (folder / lab).write_text("the lab's own\n")
    (folder / "orders.json").write_text('["o-1"]')  # the reader's: no orders.stderr beside it
    (folder / ".sent").write_text("")  # the reader's too: a dot-file the lab did not name
    for left in ("effect.db-journal", "effect.db-wal", "effect.db-shm"):
        (folder / left).write_bytes(b"")
    (folder / "a-folder").mkdir()  # the reader's folder: its files are the run's, by their path
    (folder / "a-folder" / "inner.txt").write_text("x\n")
    for readers in ("trace.jsonl", "app.stdout"):  # in a folder of it, the lab's names are theirs
        (folder / "a-folder" / readers).write_text('{"step": 1}\n')
    (folder / ".cache").mkdir()  # the reader's folder, though a dot-folder
    (folder / ".cache" / "seen.txt").write_text("o-1\n")
    for lab in (LABS_OWN + "code", "after-day"):  # the lab's own, a restart's copy of the state
        (folder / lab).mkdir()
        (folder / lab / "inner.txt").write_text("the lab's own\n")
    return folder


def test_a_run_folder_is_read_as_its_tables_and_lines_and_nothing_of_the_labs(run_dir):
    blob = "sha256:" + hashlib.sha256(b"\x00\xff").hexdigest()[:16]
    assert read_state(str(run_dir)) == {
        ".cache/seen.txt": ["o-1"],
        ".sent": [],
        "a-folder/app.stdout": [{"step": 1}],
        "a-folder/inner.txt": ["x"],
        "a-folder/trace.jsonl": [{"step": 1}],
        "effect.db": {"receipts": [[1, "a", None], [2, "b", blob]]},
        "orders.json": [["o-1"]],
        "outbox.log": [{"sent": 1}, "plain text", [1, 2]],
    }
    assert list(read_state(str(run_dir))) == [
        ".cache/seen.txt",
        ".sent",
        "a-folder/app.stdout",
        "a-folder/inner.txt",
        "a-folder/trace.jsonl",
        "effect.db",
        "orders.json",
        "outbox.log",
    ]


def test_a_sqlite_file_is_known_by_its_header_not_its_name(run_dir):
    os.rename(run_dir / "effect.db", run_dir / "ledger")
    (run_dir / "notes.db").write_text("lines, not a database\n")
    state = read_state(str(run_dir))
    assert state["ledger"] == {
        "receipts": [[1, "a", None], [2, "b", state["ledger"]["receipts"][1][2]]]
    }
    assert state["notes.db"] == ["lines, not a database"]
    assert is_database(str(run_dir / "ledger")) and not is_database(str(run_dir / "notes.db"))
    assert not is_database(str(run_dir / "gone"))


def test_a_file_that_is_not_text_is_unreadable_and_named_with_its_bytes_digest(run_dir):
    """No checker reads it, but two states tell its bytes apart (a shelf credited twice)."""
    data = b"\xff\xfe\x00\x81"
    (run_dir / "image.bin").write_bytes(data)
    state = read_state(str(run_dir))
    assert (
        state["image.bin"]
        == "not SQLite, not text, sha256:" + hashlib.sha256(data).hexdigest()[:16]
    )
    assert unreadable(state) == ["image.bin"]
    assert unreadable({"a": [], "b": {}}) == []
    digest = state_digest(str(run_dir))
    (run_dir / "image.bin").write_bytes(data + b"\x81")
    assert state_digest(str(run_dir)) != digest


def a_shelf(folder, **values: object) -> None:
    """`shelve` on dbm.dumb, as Python without gdbm or ndbm keeps it: miles.dat, miles.dir
    (the index: a key and its value's offset a line) and, after a rewrite, miles.bak."""
    with shelve.Shelf(dbm.dumb.open(str(folder / "miles"))) as miles:
        miles.update(values)


def files_as_they_are(folder) -> dict:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


def test_a_dbm_dumb_shelf_is_one_entry_a_line_a_key_read_without_a_byte_written(run_dir):
    a_shelf(run_dir, ada=500, bo={"tier": "gold", "flights": ("LX 38",)})
    before = files_as_they_are(run_dir)
    state = read_state(str(run_dir))
    assert state["miles.dat"] == [{"ada": 500}, {"bo": {"tier": "gold", "flights": ["LX 38"]}}]
    assert "miles.dir" not in state and "miles.bak" not in state and unreadable(state) == []
    assert files_as_they_are(run_dir) == before  # dbm.dumb read-only: not even its index
    assert kept_in(str(run_dir), "miles.dat") == ("miles.dat", "miles.dir", "miles.bak")
    assert kept_in(str(run_dir), "outbox.log") == ("outbox.log",)


def test_two_shelves_that_hold_the_same_are_equal_states_at_any_offset(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    for folder in (one, two):
        folder.mkdir()
        a_shelf(folder, ada=500)
    a_shelf(two, ada="a value longer than a block of dbm.dumb's .dat, 512 bytes" * 10)
    a_shelf(two, ada=500)  # fits where the long value went: the index keeps that offset
    assert (one / "miles.dir").read_text() != (two / "miles.dir").read_text()
    assert read_state(str(one)) == read_state(str(two))
    assert state_digest(str(one)) == state_digest(str(two))
    a_shelf(two, ada=1000)
    assert read_state(str(two))["miles.dat"] == [{"ada": 1000}]


class Opens:
    """Pickled as a call of `open`: unpickling it would create a file."""

    def __init__(self, path) -> None:
        self.path = str(path)

    def __reduce__(self) -> tuple:
        return (open, (self.path, "w"))


def test_a_shelf_of_values_that_are_no_plain_data_is_unreadable_and_runs_no_code(tmp_path):
    """An object that unpickles by a call, or a Decimal: the shelf is not read (its pickles not
    run), but two states still tell its keys and values apart."""
    ran, run = tmp_path / "ran", tmp_path / "run"
    run.mkdir()
    a_shelf(run, ada=Opens(ran))
    state = read_state(str(run))
    assert state["miles.dat"].startswith("not SQLite, not text, sha256:") and not ran.exists()
    assert unreadable(state) == ["miles.dat"]
    a_shelf(run, ada=Decimal(500))
    assert read_state(str(run))["miles.dat"] not in (state["miles.dat"], [{"ada": 500}])


def test_a_shelf_whose_index_a_crash_cut_is_unreadable_by_its_bytes(run_dir):
    a_shelf(run_dir, ada=500, bo=700)
    index = (run_dir / "miles.dir").read_bytes()
    (run_dir / "miles.dir").write_bytes(index[: index.index(b"\n") + 8])  # "'bo', (5"
    state = read_state(str(run_dir))
    assert state["miles.dat"].startswith("not SQLite, not text, sha256:"), state
    assert "miles.dir" not in state
    with open(run_dir / "miles.dat", "r+b") as values:  # the same cut index, other values
        values.write(b"\x00")
    other_values = read_state(str(run_dir))["miles.dat"]
    assert other_values != state["miles.dat"]  # told apart
    (run_dir / "miles.dir").write_bytes(index[: index.index(b"\n") + 9])  # the same values
    assert read_state(str(run_dir))["miles.dat"] != other_values  # cut elsewhere: told apart


def test_a_shelfs_key_that_is_not_utf8_is_read_with_its_bytes_escaped(run_dir):
    """dbm.dumb keeps bytes keys (shelve writes UTF-8; dbm.dumb itself takes any bytes)."""
    with dbm.dumb.open(str(run_dir / "miles")) as db:
        db[b"\xffada"] = pickle.dumps(500)
    assert read_state(str(run_dir))["miles.dat"] == [{"\\xffada": 500}]


def test_a_link_to_a_folder_outside_the_run_folder_is_not_read(run_dir, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not the run's\n")
    (run_dir / "linked").symlink_to(outside, target_is_directory=True)
    assert not any(name.startswith("linked") for name in read_state(str(run_dir)))


def test_a_databases_tables_are_all_read_but_sqlites_own(tmp_path):
    path = tmp_path / "two.db"
    a_database(
        path,
        "CREATE TABLE a (x)",
        "CREATE TABLE b (y INTEGER PRIMARY KEY AUTOINCREMENT, z)",
        "INSERT INTO b (z) VALUES (5)",
        "CREATE VIEW v AS SELECT 1",
    )
    assert read_tables(str(path)) == {"a": [], "b": [[1, 5]]}  # no sqlite_sequence, no view
    (tmp_path / "empty.db").write_bytes(b"")
    assert read_tables(str(tmp_path / "empty.db")) == {}
    (tmp_path / "foreign").write_bytes(b"SQLite format 3\x00" + b"\x07" * 200)
    assert read_tables(str(tmp_path / "foreign")) == {}


@pytest.mark.parametrize(
    ("line", "read"),
    [
        ('{"pid": 1, "t_ns": 2, "role": "first"}', {"role": "first"}),
        ('{"t": 1}', {"t": 1}),
        ("[1, 2]", [1, 2]),
        ("3", 3),
        ("not json {", "not json {"),
    ],
)
def test_a_json_line_is_read_without_what_differs_between_two_equal_runs(line, read):
    assert without_volatile(line) == read


def test_lines_are_read_without_their_ends_and_without_blank_ones(tmp_path):
    (tmp_path / "f").write_text("  a  \n\n   \nb\nBOX\nX\n")
    assert read_lines(str(tmp_path / "f")) == ["  a  ", "b", "BOX", "X"]


def test_a_value_json_cannot_carry_is_its_short_sha256():
    assert plain(b"abc") == "sha256:" + hashlib.sha256(b"abc").hexdigest()[:16]
    assert len(plain(b"")) == len("sha256:") + 16
    assert [plain(v) for v in (1, "x", None, 2.5)] == [1, "x", None, 2.5]


def test_equal_states_have_equal_digests_and_a_changed_row_another(run_dir, tmp_path):
    digest = state_digest(str(run_dir))
    text = json.dumps(read_state(str(run_dir)), sort_keys=True, default=repr)
    assert digest == hashlib.sha256(text.encode()).hexdigest()[:16]
    (run_dir / "w.stdout").write_text("another output: the same state\n")
    assert state_digest(str(run_dir)) == digest
    a_database(run_dir / "effect.db", "UPDATE receipts SET op_key = 'c' WHERE id = 1")
    assert state_digest(str(run_dir)) != digest


@pytest.mark.parametrize(
    ("name", "labs"),
    [
        (MARKER, True),
        (LABS_OWN + "recovery-exit", True),  # a name the lab gave its own
        (".sent", False),  # a dot-file the lab did not name: the reader's marker
        ("w.stdout", True),
        ("w.stderr", True),
        ("w.json", True),  # a worker's report, beside its w.stderr
        ("orders.json", False),  # the reader's JSON: part of the run's state
        ("orders.json.tmp", False),
        ("effect.db", False),
        ("stdout", False),
        ("outbox.log", False),
    ],
)
def test_the_labs_own_files_are_told_by_their_names(name, labs, run_dir):
    assert lab_file(name, str(run_dir)) is labs


def test_a_copy_holds_the_run_as_it_is_and_its_trace_as_the_first_workers(run_dir, tmp_path):
    (run_dir / "trace.jsonl").write_text('{"role": "record", "x": 1}\n{"role": "other"}\n')
    copy = tmp_path / "copy"
    copy.mkdir()
    copy_files(str(run_dir), str(copy))
    assert sorted(os.listdir(copy)) == sorted(
        ["effect.db", "orders.json", "outbox.log", "trace.jsonl", "a-folder", ".sent", ".cache"]
        + ["effect.db-journal", "effect.db-wal", "effect.db-shm", "after-day"]
    )
    trace = (copy / "trace.jsonl").read_text()
    assert trace == '{"role": "first", "x": 1}\n{"role": "other"}\n'
    assert (copy / "a-folder" / "inner.txt").read_text() == "x\n"
    assert (copy / "effect.db").read_bytes() == (run_dir / "effect.db").read_bytes()
    assert read_state(str(copy)) == read_state(str(run_dir))


def test_a_descriptor_is_found_in_the_run_folder_or_not(run_dir, tmp_path):
    inside = os.open(run_dir / "outbox.log", os.O_RDONLY)
    outside = os.open(tmp_path / "elsewhere", os.O_WRONLY | os.O_CREAT)
    inner = os.open(run_dir / "a-folder" / "inner.txt", os.O_RDONLY)
    try:
        assert run_file(inside, str(run_dir)) == os.path.realpath(run_dir / "outbox.log")
        assert run_file(outside, str(run_dir)) is None
        assert run_file(inner, str(run_dir)) is None  # only the folder's own files
        assert run_file(10_000, str(run_dir)) is None
        assert opened_path(inside) == os.path.realpath(run_dir / "outbox.log")
        assert mark(outside) == (0, os.fstat(outside).st_mtime_ns)
        os.write(outside, b"abc")
        assert mark(outside)[0] == 3
    finally:
        for fd in (inside, outside, inner):
            os.close(fd)
    assert opened_path(str(run_dir / "a-folder" / ".." / "outbox.log")) == str(
        os.path.realpath(run_dir / "outbox.log")
    )
    assert opened_path(10_000) is None and opened_path(object()) is None
    assert opened_path("a\x00b") is None


def test_the_readers_own_files_are_real_files_outside_the_lab_and_python(tmp_path):
    mine = tmp_path / "steps.py"
    mine.write_text("")
    assert readers_own(str(mine))
    assert not readers_own(str(tmp_path / "gone.py"))
    assert not readers_own("<string>") and not readers_own("<frozen os>")
    assert not readers_own(os.__file__)  # Python's own
    assert not readers_own(sqlite3.__file__)
    assert not readers_own(__import__("labkit").__file__)  # the lab's


def test_a_pragma_that_sets_synchronous_is_ignored_and_nothing_else(tmp_path, monkeypatch):
    pragma = sqlite3.SQLITE_PRAGMA
    assert keep_synchronous_off(pragma, "synchronous", "FULL") == sqlite3.SQLITE_IGNORE
    assert keep_synchronous_off(pragma, "synchronous", None) == sqlite3.SQLITE_OK  # a read
    assert keep_synchronous_off(pragma, "journal_mode", "WAL") == sqlite3.SQLITE_OK
    assert keep_synchronous_off(sqlite3.SQLITE_READ, "synchronous", "x") == sqlite3.SQLITE_OK
    monkeypatch.setattr(os, "fsync", os.fsync)  # skip_disk_waits replaces them: put back after
    monkeypatch.setattr(sqlite3, "connect", sqlite3.connect)
    skip_disk_waits()
    assert os.fsync(10_000) is None  # no descriptor: it waits for nothing, and checks nothing
    db = sqlite3.connect(f"file:{tmp_path / 'f.db'}?mode=rwc", uri=True, isolation_level=None)
    assert db.isolation_level is None  # what the code asked for is passed on
    db.execute("PRAGMA synchronous=FULL")
    assert db.execute("PRAGMA synchronous").fetchone() == (0,)  # OFF
    db.execute("CREATE TABLE t (x)")
    db.execute("INSERT INTO t VALUES (1)")
    assert db.execute("SELECT x FROM t").fetchall() == [(1,)]
    db.close()


def test_equal_states_written_in_another_order_have_the_same_digest(tmp_path):
    """The same rows and lines, their keys and tables made in another order: one crash state."""
    one, two = tmp_path / "one", tmp_path / "two"
    for folder, tables, line in [(one, "ab", '{"a": 1, "b": 2}'), (two, "ba", '{"b": 2, "a": 1}')]:
        folder.mkdir()
        a_database(folder / "e.db", *(f"CREATE TABLE {t} (x)" for t in tables))
        (folder / "out.log").write_text(line + "\n")
    assert read_state(str(one)) == read_state(str(two))
    assert state_digest(str(one)) == state_digest(str(two))


def test_a_written_file_is_a_crash_point_only_when_its_bytes_reach_the_kernel(tmp_path):
    reached = []
    path = tmp_path / "out.log"
    with WrittenFile(open(path, "w"), lambda: reached.append(path.read_text())) as out:
        out.write("buffered")
        assert reached == []  # still in Python's buffer: a kill loses it, no new state
        out.flush()
        assert reached == ["buffered"]
        out.flush()
        out.writelines(["", ""])
        assert reached == ["buffered"]  # nothing new reached the file
        out.writelines(["a", "b"])
        out.flush()
        assert reached == ["buffered", "bufferedab"]
        out.write("c")
    assert reached == ["buffered", "bufferedab", "bufferedabc"]  # closing flushed it
    assert out.closed and path.read_text() == "bufferedabc"
    out.close()  # closed twice: nothing happens
    assert len(reached) == 3


def test_a_written_file_dropped_unclosed_is_a_crash_point_as_python_closes_it(tmp_path):
    reached = []
    path = tmp_path / "out.log"
    opened = open(path, "w")  # noqa: SIM115 - never closed, as in `open(path, "w").write(text)`
    WrittenFile(opened, lambda: reached.append(path.read_text())).write("sent\n")
    del opened
    assert reached == ["sent\n"]  # flushed as it is dropped: its bytes reached the kernel
