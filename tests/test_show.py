"""`labkit show` reads any folder of SQLite files, or says in one line why it cannot."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys

import pytest

import labkit as lk
from labkit.bench.snapshot import read_tables, snapshot_folder

QUOTED = '"say ""hi"""'  # the table say "hi", its name quoted for SQL


def show(folder, cwd):
    return subprocess.run(
        [sys.executable, "-m", "labkit", "show", str(folder)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def make_db(path, *statements):
    db = sqlite3.connect(path)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()


def test_a_table_name_with_quotes_and_a_folder_name_with_uri_characters(tmp_path):
    folder = tmp_path / "run #1?mode=rw %20"
    folder.mkdir()
    make_db(
        folder / "odd.db",
        f"CREATE TABLE {QUOTED} (word)",
        f"INSERT INTO {QUOTED} VALUES ('b'), ('a')",
        "CREATE TABLE pairs (k TEXT PRIMARY KEY, v) WITHOUT ROWID",
        "INSERT INTO pairs VALUES ('z', 1), ('y', 2)",
    )
    tables = snapshot_folder(folder).files["odd.db"]
    assert tables['say "hi"'].rows == [["b"], ["a"]]  # rowid order
    assert tables["pairs"].rows == [["y", 2], ["z", 1]]  # primary-key order
    done = show(folder, tmp_path)
    assert done.returncode == 0 and done.stderr == ""
    assert 'odd.db · say "hi"' in done.stdout and "odd.db · pairs" in done.stdout


def test_the_reader_stays_read_only(tmp_path):
    make_db(tmp_path / "a.db", "CREATE TABLE t (x)")
    before = (tmp_path / "a.db").read_bytes()
    read_tables(tmp_path / "a.db")
    assert (tmp_path / "a.db").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.db"]  # no journal, no WAL files


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda f: (f / "notes.db").write_text("not SQLite " * 20), "notes.db is not a SQLite"),
        (lambda f: (f / "folder.db").mkdir(), "no SQLite files (*.db) in"),
        (lambda f: None, "no SQLite files (*.db) in"),
    ],
)
def test_show_refuses_what_is_not_a_run_folder_in_one_line(tmp_path, make, says):
    folder = tmp_path / "run"
    folder.mkdir()
    make(folder)
    with pytest.raises(lk.LabError, match=re.escape(says)):
        snapshot_folder(folder)
    done = show(folder, tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and says in done.stderr and "Traceback" not in done.stderr


def test_show_of_a_missing_folder_or_a_file(tmp_path):
    (tmp_path / "a.db").write_text("")
    for given, says in (("missing", "is not there"), ("a.db", "is a file, not a folder")):
        done = show(tmp_path / given, tmp_path)
        assert done.returncode == 2 and done.stdout == ""
        expected = f"{tmp_path / given} {says}; give a run folder, one that holds *.db files"
        assert done.stderr == f"labkit: error: {expected}\n"
