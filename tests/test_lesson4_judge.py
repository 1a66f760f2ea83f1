"""Lesson 4's judges cost and say exactly what their trials showed (issue 33: the mutants mutmut
left in workshop/lesson4.py): the trials asked for, each mode's cost, the verdict's figures and
the run it points to. The trials are stand-ins with known outcomes (run_trials' own results are
tested in test_durability*.py; the real ones judge the solution and wrong answers in
test_exercises.py).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from labkit.studies.durability.experiment import DURABILITY_MODES, DurabilitySpec, Trial
from labkit.workshop import lesson4
from labkit.workshop.lesson4 import choose_durability, predict_sync_trial

RERUNS = {"sync": [["c"], ["c"], ["c"]], "async": [["c"], ["c", "d"], ["c"]], "exit": [None] * 3}


def trial(mode: str, run_dir: str, rerun: list[str] | None, failure: str | None = None) -> Trial:
    """A trial as run_trials returns it: resumed with `rerun` run again, or lost (None)."""
    return Trial(
        spec=DurabilitySpec("linear", mode, lesson4.SLOW_MS),
        run_dir=run_dir,
        first_exit=-9,
        killed_inside=True,
        checkpoints=4,
        writes=4,
        orphan_writes=0,
        resumed=rerun is not None,
        recovery_error=None,
        ledger_lines=9,
        baseline_lines=8,
        rerun_nodes=rerun or [],
        pids=[1, 2],
        failure=failure,
    )


def trials_of(reruns: dict[str, list], asked: list) -> object:
    """run_trials' stand-in: each mode's trials as `reruns` says, in run_trials' order."""

    def run_trials(specs: list[DurabilitySpec], n: int) -> list[Trial]:
        asked.append((specs, n))
        return [
            trial(s.mode, f"/runs/{s.mode}-{i}", reruns[s.mode][i]) for s in specs for i in range(n)
        ]

    return run_trials


def test_the_cheapest_mode_is_correct_with_every_modes_cost(monkeypatch):
    asked: list = []
    monkeypatch.setattr(lesson4, "run_trials", trials_of(RERUNS, asked))
    verdict = choose_durability.check(" Sync. ")
    assert (verdict.status, verdict.message, verdict.run_dir) == (
        "correct",
        "sync cost the least in 3 real kills each: sync 30, async 40, exit 3,000",
        "/runs/sync-0",
    )
    assert asked == [([DurabilitySpec("linear", m, 100) for m in DURABILITY_MODES], 3)]


def test_a_mode_that_ties_the_cheapest_is_correct_too(monkeypatch):
    monkeypatch.setattr(lesson4, "run_trials", trials_of({**RERUNS, "async": RERUNS["sync"]}, []))
    verdict = choose_durability.check("async")
    assert (verdict.status, verdict.message, verdict.run_dir) == (
        "correct",
        "async cost the least in 3 real kills each: sync 30, async 30, exit 3,000",
        "/runs/async-0",
    )


def test_a_dearer_mode_is_told_its_losses_and_repeats_with_its_worst_trial(monkeypatch):
    lucky_exit = {**RERUNS, "exit": [None, ["a", "b", "c"], None]}
    judged = []
    for reruns, choice in ((RERUNS, "async"), (lucky_exit, "exit")):
        monkeypatch.setattr(lesson4, "run_trials", trials_of(reruns, []))
        verdict = choose_durability.check(choice)
        judged.append((verdict.status, verdict.message, verdict.run_dir))
    assert judged == [
        (
            "incorrect",
            "in 3 real kills, async cost 40: 0 runs lost (1,000 each) and 4 node runs repeated"
            " (10 each); another mode cost less",
            "/runs/async-1",  # the trial that ran two nodes again
        ),
        (
            "incorrect",
            "in 3 real kills, exit cost 2,030: 2 runs lost (1,000 each) and 3 node runs"
            " repeated (10 each); another mode cost less",
            "/runs/exit-0",  # a lost run costs more than any repeat
        ),
    ]


def test_a_trial_that_failed_by_itself_is_named_by_its_mode(monkeypatch):
    why = "recovery worker exited 1: RuntimeError: boom"

    def run_trials(specs: list[DurabilitySpec], n: int) -> list[Trial]:
        return [
            trial(
                s.mode, f"/runs/{s.mode}-{i}", ["c"], why if (s.mode, i) == ("async", 2) else None
            )
            for s in specs
            for i in range(n)
        ]

    monkeypatch.setattr(lesson4, "run_trials", run_trials)
    verdict = choose_durability.check("exit")
    assert (verdict.status, verdict.message, verdict.run_dir) == (
        "no verdict",
        f"a real trial of async failed ({why}), so it says nothing about your answer: check again",
        "/runs/async-2",
    )


def test_what_is_not_a_mode_is_refused_naming_the_modes(monkeypatch):
    monkeypatch.setattr(lesson4, "run_trials", trials_of(RERUNS, []))
    for answer, shown in (("fastest", "'fastest'"), (["sync"], "['sync']"), (3, "3")):
        verdict = choose_durability.check(answer)
        assert (verdict.status, verdict.message, verdict.run_dir) == (
            "incorrect",
            f"{shown} is not a durability mode; choose one of: sync, async, exit",
            None,
        )


def test_the_sync_trials_figures_come_from_one_real_sync_trial(monkeypatch):
    asked: list = []
    one = replace(trial("sync", "/runs/sync-0", ["c", "d"]), ledger_lines=10)

    def run_trials(specs: list[DurabilitySpec], n: int) -> list[Trial]:
        asked.append((specs, n))
        return [one]

    monkeypatch.setattr(lesson4, "run_trials", run_trials)
    verdict = predict_sync_trial.check({"checkpoints": 4, "ledger_lines": 10})
    assert asked == [([DurabilitySpec("linear", "sync")], 1)]
    assert (verdict.status, verdict.run_dir) == ("correct", "/runs/sync-0"), str(verdict)
    verdict = predict_sync_trial.check({"checkpoints": 3, "ledger_lines": 10})
    assert verdict.status == "incorrect"
    assert "checkpoints: you said 3, the real run gave 4 (at the kill)" in verdict.message
    verdict = predict_sync_trial.check({"checkpoints": 4, "ledger_lines": 9})
    assert "ledger_lines: you said 9, the real run gave 10 (ran again: c, d)" in verdict.message
    assert verdict.run_dir == "/runs/sync-0"
    why = "recovery worker exited 1: RuntimeError: boom"
    one = replace(one, failure=why)
    for open_part in ("checkpoints", "ledger_lines"):  # each figure carries its trial's failure
        verdict = predict_sync_trial.check({"checkpoints": 4, "ledger_lines": 10, open_part: "???"})
        assert (verdict.status, verdict.run_dir) == ("no verdict", "/runs/sync-0"), str(verdict)
        assert why in verdict.message and "10" not in verdict.message


def test_the_sync_trial_shown_is_a_real_one():
    """One real kill inside c (linear graph, sync): a checkpoint for the input and one per
    super-step before c; c run again, so one ledger line more than a clean run's 8."""
    figures = lesson4.sync_trial(["checkpoints", "ledger_lines"])
    assert [(m.value, m.story, m.failure) for m in figures.values()] == [
        (4, "at the kill", None),
        (9, "ran again: c", None),
    ]
    assert Path(figures["checkpoints"].run_dir).is_dir()
