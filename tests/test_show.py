"""`labkit show` reads any folder of SQLite files, or says in one line why it cannot."""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import subprocess
import sys

import pytest

import labkit as lk
from labkit import views
from labkit.bench.snapshot import read_tables, snapshot_folder
from labkit.views import durability, interrupt_resume
from tests.conftest import SEEN_AS, labkit_as_nobody

QUOTED = '"say ""hi"""'  # the table say "hi", its name quoted for SQL


def show(folder, cwd):
    return subprocess.run(
        [sys.executable, "-m", "labkit", "show", str(folder)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def assert_one_line(done, says):
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("labkit: error: ") and says in done.stderr, done.stderr


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


# A process that writes a transaction too big for its page cache into the file and is killed
# before it commits: a hot journal beside the file holds the pages as they were.
KILLED_INSIDE_A_TRANSACTION = """
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA cache_size=1")
db.execute("BEGIN")
db.executemany("INSERT INTO t VALUES (?)", [(os.urandom(2000),)] * 50)
os._exit(9)
"""


def kill_inside_a_transaction(path):
    make_db(path, "CREATE TABLE IF NOT EXISTS t (x)", "INSERT INTO t VALUES ('committed')")
    killed = subprocess.run([sys.executable, "-c", KILLED_INSIDE_A_TRANSACTION, str(path)])
    assert killed.returncode == 9 and os.path.getsize(f"{path}-journal") > 0


def test_a_file_killed_inside_a_transaction_reads_as_its_recovery_will_find_it(tmp_path):
    kill_inside_a_transaction(tmp_path / "a.db")
    as_killed = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert read_tables(tmp_path / "a.db")["t"].rows == [["committed"]]
    assert snapshot_folder(tmp_path).files["a.db"]["t"].rows == [["committed"]]
    # nothing changed, nothing left: the journal is still there for the recovery to roll back
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == as_killed
    with contextlib.closing(sqlite3.connect(tmp_path / "a.db")) as recovery:
        assert recovery.execute("SELECT x FROM t").fetchall() == [("committed",)]


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


def corrupt(folder):
    """A SQLite file whose header is good and whose pages are overwritten."""
    make_db(folder / "broken.db", "CREATE TABLE t (x)", "INSERT INTO t VALUES (1)")
    with open(folder / "broken.db", "r+b") as file:
        file.seek(100)
        file.write(b"\xff" * 3000)


def test_a_corrupted_database_is_one_line_that_names_it_in_the_cli_and_the_api(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    corrupt(folder)
    says = f"cannot read {folder / 'broken.db'}: SQLite says: database disk image is malformed"
    assert_one_line(show(folder, tmp_path), says)
    for view in (snapshot_folder, views.show_folder):
        with pytest.raises(lk.LabError, match=re.escape(says)):
            view(folder)


@pytest.mark.parametrize(
    ("make", "says"),
    [
        ("unreadable", "cannot read {run}/a.db: SQLite says: unable to open database file"),
        (
            "wal in a read-only folder",
            "cannot read {run}/a.db: SQLite says: attempt to write a readonly database",
        ),
        ("unlistable", "cannot read the folder {run}: Permission denied"),  # not "no *.db"
        (
            "killed inside a transaction",
            "cannot read {run}/a.db: a process was killed inside a transaction of it, and only"
            " one that may write in its folder can roll that back (Permission denied)",
        ),
    ],
)
def test_a_database_the_reader_may_not_open_is_one_line(tmp_path, make, says):
    folder = tmp_path / "run"
    folder.mkdir(mode=0o755)  # root's: another user may read it, not write in it
    journal = "WAL" if make == "wal in a read-only folder" else "DELETE"
    make_db(folder / "a.db", f"PRAGMA journal_mode={journal}", "CREATE TABLE t (x)")
    if make == "unreadable":
        (folder / "a.db").chmod(0o600)
    elif make == "unlistable":
        folder.chmod(0o711)
    elif make == "killed inside a transaction":
        kill_inside_a_transaction(folder / "a.db")
    done = labkit_as_nobody(tmp_path, "show", f"{SEEN_AS}/run")
    assert_one_line(done, says.format(run=f"{SEEN_AS}/run"))


def test_a_run_folder_in_another_users_private_runs_home_is_one_line(tmp_path):
    home = tmp_path / "labkit-runs-0"  # root's own runs home: mode 0700
    home.mkdir(mode=0o700)
    (home / "run").mkdir()
    make_db(home / "run" / "a.db", "CREATE TABLE t (x)")
    done = labkit_as_nobody(tmp_path, "show", f"{SEEN_AS}/labkit-runs-0/run")
    assert_one_line(done, f"cannot read the folder {SEEN_AS}/labkit-runs-0/run: Permission denied")


@pytest.fixture(scope="module")
def a_run(tmp_path_factory):
    return lk.run("atomic", out=tmp_path_factory.mktemp("show") / "run")


@pytest.mark.parametrize(
    ("show_it", "says"),
    [
        (
            lambda r: views.show_run(None),
            "result must be a RunResult .what lk.run returns., not None",
        ),
        (lambda r: views.show_run(r.summary()), "result must be a RunResult .*, not a dict"),
        (lambda r: views.show_timeline("x"), "result must be a RunResult .*, not 'x'"),
        (lambda r: views.show_folder(None), "run_dir must be a folder path, not None"),
        (lambda r: views.show_snapshot(r), "snapshot must be a Snapshot .*, not a RunResult"),
        (lambda r: views.show_study_table(r), "results must be a list of RunResult"),
        (lambda r: views.show_sweep("x"), "results must be a list of RunResult .*, not 'x'"),
        (lambda r: views.show_sweep([r, None]), "results must be a list of RunResult"),
        (lambda r: views.show_deliveries(None, r.after), "answers must be the answers deliver_all"),
        (lambda r: durability.show_trials(None), "trials must be a list of Trial"),
        (lambda r: durability.show_checkpoints({}), "described must be what describe_checkpoints"),
        (lambda r: durability.show_pitfall("nope", {}), "unknown pitfall 'nope'; choose one of"),
        (
            lambda r: durability.show_pitfall("unknown_thread", {}),
            "report must be what run_pitfall returns, not {}",
        ),
        (
            lambda r: interrupt_resume.show_interrupt({}),
            "result must be what run_interrupt returns",
        ),
        (lambda r: interrupt_resume.show_interrupt_table([{}]), "each result must be what"),
    ],
)
def test_every_show_function_refuses_a_wrong_argument_in_one_line(a_run, show_it, says):
    with pytest.raises(lk.LabError, match=says):
        show_it(a_run)
