"""The explorer's default checker, judged on crash states written out by hand (issue 33: the
mutants mutmut left in studies/explorer/checker.py). Each test holds what a real recovery
could leave: a row too many or too few, a row with other values, an id SQLite numbered
again, a line a file holds twice; and asserts the checker's exact line, or None.
"""

from __future__ import annotations

import sqlite3
import time

import pytest

from labkit.bench.restart import RETRY_DELAY
from labkit.studies.explorer.checker import CrashState, default_checker, ignored, outcome_of

POINT = {"n": 3, "op": "commit", "detail": "effect.db", "where": "steps.py:5"}
RECEIPT = [1, "k", "p"]
# Times near now, and far from it, each read from the clock as the tests are collected, with
# an id of its own (the test workers collect them at different moments).
YEAR = 365 * 86_400


def from_now(label: str, offset: float, unit: int = 1) -> object:
    """A number of `unit`s since 1970, `offset` seconds from now."""
    return pytest.param((time.time() + offset) * unit, id=label)


NEAR_NOW = [
    from_now("now, s", 0),
    from_now("moved by a restart, s", RETRY_DELAY),
    from_now("4 years ago, s", -4 * YEAR),
    from_now("a deadline 4 years on, s", 4 * YEAR),
    from_now("now, ms", 0, 10**3),
    from_now("now, us", 0, 10**6),
    from_now("now, ns", 0, 10**9),
]
FAR_FROM_NOW = [
    from_now("6 years on, ms", 6 * YEAR, 10**3),
    from_now("6 years ago, ns", -6 * YEAR, 10**9),
]


def state(after: dict, clean: dict, *, finished=True, error=None, run_dir="") -> CrashState:
    return CrashState(POINT, {}, after, clean, finished, error, run_dir)


def test_a_failed_recovery_is_lost_and_says_its_error_before_anything_else():
    clean = {"effect.db": {"receipts": [RECEIPT]}}
    failed = state({}, clean, finished=False, error="OperationalError: locked")
    assert default_checker(failed) == "lost: recovery failed: OperationalError: locked"
    assert default_checker(failed).as_dict() == {
        "code": "recovery_failed",
        "error": "OperationalError: locked",
    }


def test_a_row_too_many_or_too_few_names_its_file_table_and_both_counts():
    one, two = {"receipts": [RECEIPT]}, {"receipts": [RECEIPT, [2, "k", "p"]]}
    more = default_checker(state({"effect.db": two}, {"effect.db": one}))
    assert (
        more == "duplicate: effect.db table receipts holds 2 where the run without a crash left 1"
    )
    assert more.as_dict() == {
        "code": "holds_more",
        "file": "effect.db",
        "table": "receipts",
        "count": 2,
        "clean": 1,
    }
    fewer = default_checker(state({"effect.db": {"receipts": []}}, {"effect.db": one}))
    assert fewer == "lost: effect.db table receipts holds 0 where the run without a crash left 1"
    # a table the recovery never made, and one the run without a crash never made
    assert default_checker(state({}, {"effect.db": one})) == fewer
    assert default_checker(state({"effect.db": one}, {})) == (
        "duplicate: effect.db table receipts holds 1 where the run without a crash left 0"
    )


def test_a_file_that_is_not_sqlite_is_counted_line_by_line():
    said = default_checker(state({"outbox.log": ["a", "a"]}, {"outbox.log": ["a"]}))
    assert said == "duplicate: outbox.log holds 2 where the run without a crash left 1"
    assert said.as_dict()["table"] is None
    assert default_checker(state({"outbox.log": ["a"]}, {"outbox.log": ["a"]})) is None


def test_the_first_effect_by_name_is_the_one_named():
    clean = {"a.db": {"t": [[1]]}, "b.db": {"t": [[1]]}, "c.log": ["x"]}
    after = {"a.db": {"t": []}, "b.db": {"t": [[1], [1]]}, "c.log": []}
    assert default_checker(state(after, clean)).startswith("lost: a.db table t holds 0")
    after = {"a.db": {"t": [[1]]}, "b.db": {"t": [[1], [1]]}, "c.log": []}
    assert default_checker(state(after, clean)).startswith("duplicate: b.db table t holds 2")


@pytest.mark.parametrize("name", ["checkpoints.db", "history.jsonl", "port"])
def test_a_file_named_as_the_labs_bookkeeping_is_judged_as_any_other(name):
    """The names of the explorer's checkpointer file (once) and of lesson 5's history and port
    file: the checker judges what it is given; the lab's own files never reach it (the
    checkpointer's is `.labkit-checkpoints.db`, and a service's bookkeeping is taken out where
    the run called the service: tests/test_explorer_names.py)."""
    if name.endswith(".db"):
        after, clean = {name: {"charges": [[1, "a"], [2, "a"]]}}, {name: {"charges": [[1, "a"]]}}
    else:
        after, clean = {name: ["sent", "sent"]}, {name: ["sent"]}
    assert default_checker(state(after, clean)).startswith(f"duplicate: {name}")


def test_a_row_with_other_values_is_inconsistent_and_shows_both_rows():
    after = {"effect.db": {"accounts": [["alice", 80], ["bob", 5]]}}
    clean = {"effect.db": {"accounts": [["bob", 5], ["alice", 90]]}}
    said = default_checker(state(after, clean))
    assert said == (
        'inconsistent: effect.db table accounts holds ["alice", 80] where the run without a'
        ' crash left ["alice", 90]'
    )
    assert (said.fields["row"], said.fields["clean_row"]) == ('["alice", 80]', '["alice", 90]')
    # the same rows in another order are the same effect
    assert default_checker(state(clean, clean)) is None
    # an unfinished recovery whose rows are wrong is judged on its rows first
    assert default_checker(state(after, clean, finished=False)).startswith("inconsistent: ")
    assert default_checker(state(clean, clean, finished=False)) == (
        "lost: recovery did not finish the run"
    )


def test_the_smallest_differing_rows_are_the_ones_shown():
    after = {"e.db": {"t": [["b", 2], ["a", 2], ["c", 3]]}}
    clean = {"e.db": {"t": [["b", 1], ["a", 1], ["c", 3]]}}
    said = default_checker(state(after, clean))
    assert (said.fields["row"], said.fields["clean_row"]) == ('["a", 2]', '["a", 1]')
    # a value JSON cannot write is compared by its repr
    blob = default_checker(state({"e.db": {"t": [[b"x"]]}}, {"e.db": {"t": [[b"y"]]}}))
    assert (blob.fields["row"], blob.fields["clean_row"]) == ("[\"b'x'\"]", "[\"b'y'\"]")


def test_the_second_table_by_name_is_compared_when_the_first_agrees():
    after = {"e.db": {"a": [[1]], "b": [[2]]}}
    clean = {"e.db": {"a": [[1]], "b": [[3]]}}
    assert default_checker(state(after, clean)) == (
        "inconsistent: e.db table b holds [2] where the run without a crash left [3]"
    )


@pytest.mark.parametrize(
    "value",
    [
        "2026-12-04",
        "2026-12-04T21:30:00Z",
        "2026-12-04 21:30",
        "6f1c2a3e-1b2c-4d5e-8f90-a1b2c3d4e5f6",
        "6F1C2A3E1B2C4D5E8F90A1B2C3D4E5F6",
        *NEAR_NOW,
    ],
)
def test_timestamps_and_generated_ids_are_ignored(value):
    assert ignored(value)
    after, clean = {"e.db": {"t": [["k", value]]}}, {"e.db": {"t": [["k", None]]}}
    assert default_checker(state(after, clean)) is None


@pytest.mark.parametrize(
    "value",
    [
        "2026-12-04x",
        "x2026-12-04",
        "6f1c2a3e-1b2c-4d5e-8f90-a1b2c3d4e5f",
        "6f1c2a3e-1b2c-4d5e-8f90-a1b2c3d4e5f6x",
        2 * 1024**3,  # a quota of 2 GiB in bytes, not a time (2038)
        2_146_435_072,  # that quota, charged 1 MiB
        978_307_200,  # 2001: a fixed date, the same in every run
        *FAR_FROM_NOW,
        True,
        None,
        [2026],
    ],
)
def test_other_values_are_compared(value):
    assert not ignored(value)
    after, clean = {"e.db": {"t": [["k", value]]}}, {"e.db": {"t": [["k", "other"]]}}
    assert default_checker(state(after, clean)).startswith("inconsistent: e.db table t holds ")


def a_file(run_dir, name: str, schema: str) -> None:
    db = sqlite3.connect(run_dir / name)
    db.execute(schema)
    db.commit()
    db.close()


def test_an_id_sqlite_numbers_is_not_compared_other_keys_are(tmp_path):
    """INSERT OR REPLACE run twice leaves the same row under another INTEGER PRIMARY KEY: not a
    difference. A TEXT key, a key of two columns and a plain INTEGER column are compared."""
    a_file(tmp_path, "e.db", "CREATE TABLE t (name TEXT, id INTEGER PRIMARY KEY)")
    a_file(tmp_path, "f.db", "CREATE TABLE t (id TEXT PRIMARY KEY, v INT)")
    a_file(tmp_path, "g.db", "CREATE TABLE t (a INTEGER, b INTEGER, PRIMARY KEY (a, b))")
    a_file(tmp_path, "h.db", "CREATE TABLE t (id INTEGER, v INT)")
    renumbered = state({"e.db": {"t": [["x", 2]]}}, {"e.db": {"t": [["x", 1]]}}, run_dir=tmp_path)
    assert default_checker(renumbered) is None
    for file, after, clean in [
        ("f.db", ["2", 0], ["1", 0]),
        ("g.db", [1, 2], [1, 1]),
        ("h.db", [2, 0], [1, 0]),
        ("e.db", ["y", 1], ["x", 1]),
    ]:
        other = state({file: {"t": [after]}}, {file: {"t": [clean]}}, run_dir=tmp_path)
        said = default_checker(other)
        assert said.startswith(f"inconsistent: {file} table t holds "), (file, said)


def test_ids_are_read_only_from_sqlite_files_of_the_run(tmp_path):
    """A file not in the run folder, or not SQLite, leaves every column compared; the schema
    of one file does not blank the column of another."""
    a_file(tmp_path, "e.db", "CREATE TABLE t (id INTEGER PRIMARY KEY, v INT)")
    (tmp_path / "junk.db").write_text("not a database")
    after = {"e.db": {"t": [[2, 0]]}, "junk.db": {"t": [[2, 0]]}, "x.db": {"t": [[2, 0]]}}
    clean = {"e.db": {"t": [[1, 0]]}, "junk.db": {"t": [[1, 0]]}, "x.db": {"t": [[1, 0]]}}
    said = default_checker(state(after, clean, run_dir=tmp_path))
    assert said.startswith("inconsistent: junk.db table t holds [2, 0]"), said
    del after["junk.db"], clean["junk.db"]
    said = default_checker(state(after, clean, run_dir=tmp_path))
    assert said.startswith("inconsistent: x.db table t holds [2, 0]"), said
    (tmp_path / "lines.log").write_text("a\n")
    assert (
        default_checker(state({"lines.log": ["a"]}, {"lines.log": ["a"]}, run_dir=tmp_path)) is None
    )


def test_a_crash_state_keeps_what_it_was_given_and_reads_its_tables_and_files():
    at_kill = {"effect.db": {"receipts": [RECEIPT]}, "out.log": ["a"]}
    after = {"control.db": {"progress": [[1, 1]]}, "out.log": ["a", "b"]}
    clean = {"effect.db": {"receipts": []}, "out.log": "binary"}
    crash = CrashState(POINT, at_kill, after, clean, True, "E: x", "/runs/p-003")
    assert (crash.point, crash.at_kill, crash.after, crash.clean) == (POINT, at_kill, after, clean)
    assert (crash.finished, crash.recovery_error, crash.run_dir) == (True, "E: x", "/runs/p-003")
    assert repr(crash) == "CrashState(crash point 3, finished=True, run_dir='/runs/p-003')"
    clean_run = CrashState(None, {}, {}, {}, False)
    assert repr(clean_run) == "CrashState(no crash, finished=False, run_dir='')"
    assert (clean_run.recovery_error, clean_run.run_dir) == (None, "")
    assert crash.rows("progress") == [[1, 1]] and crash.rows("receipts") == []
    assert crash.rows("receipts", "at_kill") == [RECEIPT]
    assert crash.lines("out.log") == ["a", "b"] and crash.lines("out.log", "at_kill") == ["a"]
    assert crash.lines("out.log", "clean") == [] and crash.lines("none.log") == []


@pytest.mark.parametrize(
    ("complaint", "outcome"),
    [
        (None, "consistent"),
        ("duplicate: two receipts", "duplicate"),
        (" lost : nothing", "lost"),
        ("inconsistent: other", "inconsistent"),
        ("my own words", "inconsistent"),
        ("consistent", "consistent"),
    ],
)
def test_a_checkers_line_names_its_outcome_first(complaint, outcome):
    assert outcome_of(complaint) == outcome


def test_a_file_without_a_schema_read_first_does_not_hide_the_ids_after_it(tmp_path):
    """A file of lines, a file not in the run folder and a file that is not SQLite, each
    before the database: its INTEGER PRIMARY KEY is still not compared."""
    a_file(tmp_path, "e.db", "CREATE TABLE t (id INTEGER PRIMARY KEY, v INT)")
    (tmp_path / "junk.db").write_text("not a database")
    (tmp_path / "lines.log").write_text("a\n")
    for first in [{"lines.log": ["a"]}, {"gone.db": {"t": []}}, {"junk.db": {"t": []}}]:
        after, clean = {**first, "e.db": {"t": [[2, 0]]}}, {**first, "e.db": {"t": [[1, 0]]}}
        assert default_checker(state(after, clean, run_dir=tmp_path)) is None, first


@pytest.mark.parametrize(("made", "clean"), [("to alice", "to bob"), ("to bob", "to alice")])
def test_a_line_with_other_contents_is_inconsistent_and_shows_both_lines(made, clean):
    """The same number of lines, one of them other than the run without a crash wrote (a
    mail to the wrong person): the crash's line and the clean run's, each the smallest of
    its side, whichever sorts first."""
    said = default_checker(state({"outbox.log": [made, "x"]}, {"outbox.log": ["x", clean]}))
    assert said == (
        f'inconsistent: outbox.log holds "{made}" where the run without a crash left "{clean}"'
    )
    assert said.as_dict() == {
        "code": "holds_other",
        "file": "outbox.log",
        "table": None,
        "row": f'"{made}"',
        "clean_row": f'"{clean}"',
    }


def test_a_lines_times_dates_and_ids_are_blanked_at_any_depth_the_rest_compared():
    """Two runs without a crash write their own times and ids: in a text line each date,
    time or UUID is "_", in a JSON line a timestamp or id value (in a dict or a list) is
    null; a log line that starts with a date keeps the rest of its words."""

    def lines(minute: str, uid: str, to: str) -> list:
        return [
            f"2026-12-05 10:{minute}:07 sent {uid} to {to}",
            {"at": f"2026-12-05T10:{minute}", "to": [to, f"12:{minute}:00 ok"], "id": uid},
        ]

    ids = ("0f8fad5b-d9cb-469f-a165-70867728950e", "7c9e6679-7425-40de-944b-e07fc1f90ae7")
    first, second = lines("00", ids[0], "bob"), lines("01", ids[1], "bob")
    assert default_checker(state({"mail.jsonl": first}, {"mail.jsonl": second})) is None
    wrong = [lines("02", ids[0], "eve")[0], second[1]]
    said = default_checker(state({"mail.jsonl": wrong}, {"mail.jsonl": second}))
    assert said.as_dict()["row"] == '"_ sent _ to eve"', said
    assert said.as_dict()["clean_row"] == '"_ sent _ to bob"', said
    wrong = [second[0], lines("03", ids[0], "eve")[1]]
    said = default_checker(state({"mail.jsonl": wrong}, {"mail.jsonl": second}))
    assert said.as_dict()["row"] == '{"at": null, "to": ["eve", "_ ok"], "id": null}', said
    assert said.as_dict()["clean_row"] == '{"at": null, "to": ["bob", "_ ok"], "id": null}', said


SHELF = "not SQLite, not text, sha256:"  # a file no checker can read, as a state holds it
NOT_READ = (
    "not judged: miles.dat cannot be read (neither SQLite nor text), and its bytes differ from"
    " those the run without a crash left"
)


def test_a_file_no_checker_can_read_is_not_judged_where_its_bytes_differ():
    """A shelf (`shelve`'s dbm file) holds no rows or lines: where its bytes are the run without
    a crash's, the state is that run's; where they differ, or the file is in one state only,
    or a text file became unreadable, nobody judged it, and the row is never consistent."""
    clean = {"bookings.db": {"bookings": [["ada"]]}, "miles.dat": SHELF + "aaaa"}
    assert default_checker(state(dict(clean), clean)) is None
    twice = default_checker(state({**clean, "miles.dat": SHELF + "bbbb"}, clean))
    assert twice == NOT_READ and outcome_of(twice) == "not_judged"
    assert twice.as_dict() == {"code": "not_read", "file": "miles.dat"}
    assert default_checker(state({"bookings.db": clean["bookings.db"]}, clean)) == NOT_READ
    assert default_checker(state({**clean, "miles.dat": ["a line"]}, clean)) == NOT_READ


def test_a_verdict_on_a_readable_file_or_an_unfinished_run_comes_before_not_judged():
    clean = {"bookings.db": {"bookings": [["ada"]]}, "miles.dat": SHELF + "aaaa"}
    after = {"bookings.db": {"bookings": [["ada"], ["ada"]]}, "miles.dat": SHELF + "bbbb"}
    assert default_checker(state(after, clean)).startswith("duplicate: bookings.db table")
    unfinished = {**clean, "miles.dat": SHELF + "bbbb"}
    assert default_checker(state(unfinished, clean, finished=False)) == (
        "lost: recovery did not finish the run"
    )


def test_a_readers_checker_may_say_not_judged_in_words():
    assert outcome_of("not judged: I cannot open the shelf") == "not_judged"
    assert outcome_of("unjudged: I cannot open the shelf") == "inconsistent"


def test_a_json_lines_numbers_and_constants_are_compared_as_they_are():
    """A JSON line's number, true and null are no text to blank: a charge of 5 against one of
    7 is told apart, and the same line is the same."""
    line = {"amount": 5, "ok": True, "note": None}
    assert default_checker(state({"pay.jsonl": [line]}, {"pay.jsonl": [line]})) is None
    said = default_checker(state({"pay.jsonl": [{**line, "amount": 7}]}, {"pay.jsonl": [line]}))
    assert said.as_dict()["row"] == '{"amount": 7, "ok": true, "note": null}', said


def test_a_number_five_years_from_now_is_no_longer_a_time(monkeypatch):
    """The window around now is open: five years to the second is outside it, a second less
    inside, in each clock unit."""
    from labkit.studies.explorer import checker

    now = 1_800_000_000
    monkeypatch.setattr(checker.time, "time", lambda: now)
    for unit in checker.CLOCK_UNITS:
        assert not ignored((now + checker.NEAR_NOW) * unit)
        assert ignored((now + checker.NEAR_NOW - 1) * unit)
