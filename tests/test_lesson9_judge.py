"""Lesson 9's judge says exactly what the explorer found (issue 33: the mutants mutmut left in
workshop/lesson9.py): the reader's line, what the run without a crash left, the crash point,
its restart and outcome, and the folder to look in. Each verdict comes from a real exploration.
"""

from __future__ import annotations

from pathlib import Path

from wrong_answers import WRONG, green_keyed, step

from labkit.studies.commit_window.stores import KEY
from labkit.workshop.lesson9 import green_matrix, line_of

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
