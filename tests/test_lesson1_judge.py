"""Lesson 1's judge says exactly what its real runs showed (issue 33: the mutants mutmut left in
workshop/lesson1.py): the window it accepts, each point of a wrong set that did not lose the
receipt with the state its recovery left and the run to look in, the forms it refuses.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from labkit.workshop import lesson1
from labkit.workshop.lesson1 import find_the_window

NOT_LOST = "recovery left done=1 and 1 receipt (consistent): not lost"
LEFT_OUT = "your set leaves out one or more points where a kill loses the receipt"


def killed_at(run_dir: object) -> str:
    """The kill point a run of checkpoint_first was made with, from its own results.json."""
    return json.loads((Path(str(run_dir)) / "results.json").read_text())["kill_at"]


def test_the_window_is_correct_in_any_form_with_the_run_that_lost_the_receipt():
    for answer in ({"checkpoint"}, "checkpoint", ["???", "checkpoint"], (" Checkpoint. ",)):
        verdict = find_the_window.check(answer)
        assert (verdict.status, verdict.message) == (
            "correct",
            "the receipt is lost by a kill at: checkpoint",
        ), answer
        assert killed_at(verdict.run_dir) == "checkpoint"


def test_each_point_that_did_not_lose_is_named_with_its_state_and_its_own_run():
    verdict = find_the_window.check({"effect", "start"})
    start, effect, left_out = verdict.message.split("\n")
    assert verdict.status == "incorrect"
    assert start == f"killed at start, {NOT_LOST}"  # its run is the footer's: not named again
    assert killed_at(verdict.run_dir) == "start"
    assert effect.startswith(f"killed at effect, {NOT_LOST} (look in ") and effect.endswith(")")
    assert killed_at(effect.removeprefix(f"killed at effect, {NOT_LOST} (look in ")[:-1]) == (
        "effect"
    )
    assert left_out == LEFT_OUT


def test_a_set_holding_the_window_is_told_only_of_its_extra_point():
    verdict = find_the_window.check({"checkpoint", "effect"})
    assert (verdict.status, verdict.message) == ("incorrect", f"killed at effect, {NOT_LOST}")
    assert killed_at(verdict.run_dir) == "effect"


def test_an_empty_set_is_told_it_left_points_out_and_names_no_run():
    verdict = find_the_window.check(set())
    assert (verdict.status, verdict.message, verdict.run_dir) == ("incorrect", LEFT_OUT, None)


def test_what_is_not_a_set_of_kill_points_is_refused_naming_what_would_do():
    give_a_set = 'give a set of kill points, such as {"start"}'
    for answer in (7, {"checkpoint": True}, 2.5):
        verdict = find_the_window.check(answer)
        assert (verdict.status, verdict.message, verdict.run_dir) == (
            "incorrect",
            give_a_set,
            None,
        ), answer
    verdict = find_the_window.check([["checkpoint"], 3, "effect"])
    assert (verdict.status, verdict.message) == (
        "incorrect",
        "each kill point is a word, such as \"start\"; not ['checkpoint'], 3",
    )
    verdict = find_the_window.check({"later", "commit", "effect"})
    assert (verdict.status, verdict.message) == (
        "incorrect",
        "not a kill point of checkpoint_first: ['commit', 'later']; its points: start,"
        " checkpoint, effect",
    )


def test_the_first_run_that_failed_by_itself_is_named_and_nothing_judged(monkeypatch, tmp_path):
    why = "recovery worker exited 1: boom"

    def ran(order: str, point: str) -> SimpleNamespace:  # a RunResult; checkpoint's failed
        failed = point in ("checkpoint", "effect")
        spec = SimpleNamespace(kill_at=point)
        run_dir = tmp_path / point
        return SimpleNamespace(spec=spec, failure=why if failed else None, run_dir=run_dir)

    monkeypatch.setattr(lesson1, "run", ran)
    verdict = find_the_window.check({"start"})
    assert (verdict.status, verdict.message, verdict.run_dir) == (
        "no verdict",
        f"the real run killed at checkpoint failed ({why}), so it says nothing about your"
        " answer: check again",
        str(tmp_path / "checkpoint"),
    )
