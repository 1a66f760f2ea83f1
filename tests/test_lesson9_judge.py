"""Lesson 9's judge says exactly what the explorer found (issue 33: the mutants mutmut left in
workshop/lesson9.py): the reader's line, what the run without a crash left, the crash point,
its restart and outcome, and the folder to look in. Each verdict comes from a real exploration.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from wrong_answers import WRONG, green_keyed, step

from labkit.studies.commit_window.stores import KEY, PAYLOAD
from labkit.studies.explorer.report import Exploration, PointResult
from labkit.workshop import lesson9
from labkit.workshop.lesson9 import done_in, green_matrix, line_of, one_receipt_of_payload

SOURCE = "def report_step(control, effect, gate):\n    key = 1\n    with effect:\n"


def test_a_crash_points_line_is_the_readers_line_when_it_is_one_of_theirs():
    assert line_of("<your code>:3", SOURCE) == "your line 3: with effect:"
    assert line_of("<your code>:1", SOURCE) == (
        "your line 1: def report_step(control, effect, gate):"
    )
    assert line_of("a:b:2", SOURCE) == "your line 2: key = 1"
    for where in (None, "", "<your code>:0", "<your code>:4"):
        assert line_of(where, SOURCE) == "", where


def test_a_crash_that_ends_wrong_names_its_point_line_restart_and_outcome():
    verdict = green_matrix.check(WRONG["lesson9.green_matrix"]["a key of the month"][0])
    assert verdict.status == "incorrect", str(verdict)
    assert verdict.message == (
        "a crash at crash point 1 (after the commit of effect.db; your line 3: with effect:) and"
        " a recovery in the next month end duplicate: effect.db table receipts holds 2 where the"
        " run without a crash left 1"
    )
    run_dir = Path(verdict.run_dir)  # the failing recovery's own folder
    assert (run_dir.parent.name, run_dir.name) == ("point-001", "after-month"), run_dir


def test_a_key_that_changes_at_once_is_caught_at_the_first_restart():
    verdict = green_matrix.check(WRONG["lesson9.green_matrix"]["a uuid4 key"][0])
    assert verdict.status == "incorrect", str(verdict)
    assert "and a recovery at once end duplicate: " in verdict.message, verdict.message


def test_a_run_without_a_crash_must_leave_one_receipt_of_the_payload_and_done():
    other = step(
        "with effect:\n    effect.add_receipt_once(KEY, 'another payload')\n"
        "with control:\n    control.mark_done()",
        "report_step",
    )
    verdict = green_matrix.check(other)
    assert (verdict.status, verdict.message) == (
        "incorrect",
        f"run once without a crash, your step left done=1 and receipts [[1, '{KEY}',"
        " 'another payload']]: it must save one receipt of PAYLOAD and done=1",
    ), verdict.message
    assert Path(verdict.run_dir).name == "record", verdict.run_dir
    undone = step("with effect:\n    effect.add_receipt_once(KEY, PAYLOAD)", "report_step")
    verdict = green_matrix.check(undone)
    assert verdict.message.startswith("run once without a crash, your step left done=0 and"), (
        verdict.message
    )
    two = step(
        "with effect:\n    effect.add_receipt(KEY, PAYLOAD)\n    effect.add_receipt('k2', PAYLOAD)"
        "\nwith control:\n    control.mark_done()",
        "report_step",
    )
    assert "left done=1 and receipts [[1, " in green_matrix.check(two).message


def test_a_green_matrix_counts_its_points_and_states():
    verdict = green_matrix.check(green_keyed("KEY"))
    assert verdict.status == "correct", str(verdict)
    assert verdict.message.startswith(
        "green: consistent after a crash at every one of the 2 crash points (2 crash states)"
    ), verdict.message
    assert Path(verdict.run_dir).is_dir() and Path(verdict.run_dir).name.startswith("lesson9-")


def test_a_step_that_raises_in_the_run_without_a_crash_is_an_error_at_its_line():
    verdict = green_matrix.check(step("x = 1\nraise ValueError('boom')", "report_step"))
    assert (verdict.status, verdict.message) == (
        "error",
        "your code raised ValueError: boom, at line 3: raise ValueError('boom')\n"
        "Mend it and check again.",
    )
    run_dir = Path(verdict.run_dir)  # the run without a crash, where it raised
    assert (run_dir.name, run_dir.parent.name[:8]) == ("record", "lesson9-"), run_dir


def test_a_step_that_ends_without_a_traceback_is_told_so_not_a_made_up_status():
    """os._exit(3): no traceback, and its status does not reach the judge (the trial server
    passes on the error's line only); it was said as "exit status 1" whatever it was."""
    verdict = green_matrix.check(step("import os\nos._exit(3)", "report_step"))
    assert (verdict.status, verdict.message) == (
        "error",
        "your step ended the run without a crash with no traceback: os._exit, a signal, or no"
        " end in time (its record.stderr is empty)\nMend it and check again.",
    )
    assert Path(verdict.run_dir).name == "record", verdict.run_dir


def test_a_step_that_removes_its_files_left_no_receipt_and_done_0():
    """What the run without a crash left is read from the files it left: none here."""
    removes = step(
        "import os\n"
        "for db in (effect.db, control.db):\n"
        "    os.remove(db.execute('PRAGMA database_list').fetchone()[2])",
        "report_step",
    )
    verdict = green_matrix.check(removes)
    assert (verdict.status, verdict.message) == (
        "incorrect",
        "run once without a crash, your step left done=0 and receipts []: it must save one"
        " receipt of PAYLOAD and done=1",
    ), verdict.message


def test_writes_it_cannot_crash_apart_are_refused_with_the_explorations_folder():
    two_at_once = step(  # one COMMIT over two files, in a thread: no point can fall between
        "import sqlite3, threading\n"
        "def both():\n"
        "    db = sqlite3.connect('effect.db', isolation_level=None)\n"
        "    db.execute(\"ATTACH 'control.db' AS c\")\n"
        "    db.execute('BEGIN')\n"
        "    db.execute('CREATE TABLE IF NOT EXISTS log(x)')\n"
        "    db.execute('CREATE TABLE IF NOT EXISTS c.log(x)')\n"
        "    db.execute('COMMIT')\n"
        "worker = threading.Thread(target=both)\nworker.start()\nworker.join()\n"
        "with effect:\n    effect.add_receipt_once(KEY, PAYLOAD)\n"
        "with control:\n    control.mark_done()",
        "report_step",
    )
    verdict = green_matrix.check(two_at_once)
    assert verdict.status == "incorrect", str(verdict)
    assert verdict.message.startswith(
        "the explorer could not crash your commits apart: 2 commits to control.db and effect.db"
    ), verdict.message
    run_dir = Path(verdict.run_dir)  # the exploration's own folder: no crash point's
    assert run_dir.is_dir() and run_dir.name.startswith("lesson9-"), run_dir
    assert (run_dir / "record").is_dir(), sorted(p.name for p in run_dir.iterdir())


def test_a_step_that_writes_outside_its_run_folder_is_refused_not_a_crash(tmp_path):
    """No crash point is explored then, and the run without a crash is the failing row: the
    judge once asked the catalogue for the verb of that row ("run") and raised KeyError."""
    outside = tmp_path / "log.txt"
    writes = step(
        f"open({str(outside)!r}, 'a').write('x')\nwith effect:\n"
        "    effect.add_receipt_once(KEY, PAYLOAD)\nwith control:\n    control.mark_done()",
        "report_step",
    )
    verdict = green_matrix.check(writes)
    assert (verdict.status, verdict.message) == (
        "incorrect",
        f"your step wrote outside its run folder ({outside}): a crash there cannot be explored,"
        " so no crash point was. Write to relative paths (the run folder) or through control"
        " and effect",
    )
    assert Path(verdict.run_dir).name.startswith("lesson9-"), verdict.run_dir


def test_a_point_its_step_does_not_reach_again_names_no_recovery(tmp_path):
    """A thread keeps the recording from forking at its points, so each is crashed by running
    the step again; this one commits nothing the second time: no crash, no recovery came (the
    judge said "a recovery at once end failed")."""
    flag = tmp_path / "first-run"
    flag.touch()
    once = step(
        "import os, threading, time\n"
        "threading.Thread(target=time.sleep, args=(3,), daemon=True).start()\n"
        f"if os.path.exists({str(flag)!r}):\n"
        f"    os.remove({str(flag)!r})\n"
        "    with effect:\n        effect.add_receipt_once(KEY, PAYLOAD)\n"
        "    with control:\n        control.mark_done()",
        "report_step",
    )
    verdict = green_matrix.check(once)
    assert (verdict.status, verdict.message) == (
        "incorrect",
        "crash point 1 (after the commit of effect.db; your line 6: with effect:) could not be"
        " crashed: it did not die after commit effect.db: it ran to its end this time. Run"
        " again, your step must make the same commits",
    )
    run_dir = Path(verdict.run_dir)
    assert (run_dir.name, run_dir.parent.name[:8]) == ("point-001", "lesson9-"), run_dir


@pytest.mark.parametrize(
    ("stopped_by", "why"),
    [
        ({"code": "interrupted", "explored": 1}, "interrupted (Ctrl-C) after 1 crash states"),
        (None, "stopped, in the lab's own words"),  # no code: the lab's own words are shown
    ],
)
def test_an_exploration_stopped_before_its_end_gives_no_verdict(
    monkeypatch, tmp_path, stopped_by, why
):
    """Interrupted (Ctrl-C) with no failing point yet: the matrix is not green, nor wrong."""
    clean = PointResult(None, "run", "to its end", None, "consistent", None, str(tmp_path))
    stopped = Exploration(
        "report_step (your code)",
        "step",
        str(tmp_path),
        points=[clean],
        stopped="stopped, in the lab's own words",  # the reader's are stopped_by's
        stopped_by=stopped_by,
        clean={
            "effect.db": {"receipts": [[1, KEY, PAYLOAD]]},
            "control.db": {"progress": [[1, 1]]},
        },
    )
    monkeypatch.setattr(lesson9, "explored", lambda source, name: stopped)
    verdict = green_matrix.check(green_keyed("KEY"))
    assert (verdict.status, verdict.message, verdict.run_dir) == (
        "no verdict",
        f"the exploration failed ({why}), so it says nothing about your answer: check again",
        str(tmp_path),
    )


def test_done_and_the_receipt_are_read_where_the_lab_s_tables_hold_them():
    assert done_in([[1, 1]]) == 1
    assert done_in([[2, 1], [1, 0]]) == 0  # another row's done is not row 1's
    assert done_in([[1]]) == 0  # the table made again with one column: no done there
    assert done_in([]) == 0
    assert one_receipt_of_payload([[1, "job-17", PAYLOAD]])
    assert one_receipt_of_payload([[1, "job-17", PAYLOAD, "a column of the step's own"]])
    assert not one_receipt_of_payload([[1, PAYLOAD]])  # made again with two columns
    assert not one_receipt_of_payload([[1, "job-17", PAYLOAD]] * 2)
    assert not one_receipt_of_payload([])
