"""Lesson 4 · Durability under SIGKILL (notebooks/04_durability_under_sigkill.ipynb): its checked
exercises. The trials run in labkit's trial server: the kernel never imports LangGraph.

    lesson4.choose_durability.check(choice)   # .hint(), .solution()

What the verdicts and hints say is in the catalogue, `lesson4.toml`.
"""

from __future__ import annotations

from labkit.language import say
from labkit.studies.durability.experiment import DURABILITY_MODES, DurabilitySpec, run_trials
from labkit.workshop.checks import (
    WHOLE_NUMBER,
    Exercise,
    Measured,
    Verdict,
    judge_predictions,
    no_verdict,
    word,
)

__all__ = ["choose_durability", "predict_sync_trial"]


REPEAT_COST, LOSS_COST, SLOW_MS, TRIALS = 10, 1_000, 100, 3
COSTS = {"loss_cost": LOSS_COST, "repeat_cost": REPEAT_COST}  # as the messages name them


def judge_durability(choice: object) -> Verdict:
    """Every mode, TRIALS real kills each on the slow checkpointer: the choice must cost least.
    A trial whose worker failed by itself (its own error, a timeout) has no outcome to cost:
    then there is no verdict, rather than a verdict from it."""

    if word(choice) not in DURABILITY_MODES:
        modes = ", ".join(DURABILITY_MODES)
        return Verdict(
            "incorrect",
            say("lesson4.choose_durability.not_a_mode", choice=repr(choice), modes=modes),
        )
    choice = word(choice)
    trials = run_trials([DurabilitySpec("linear", m, SLOW_MS) for m in DURABILITY_MODES], TRIALS)
    failed = next((t for t in trials if t.failure), None)
    if failed:
        trial_of = say("lesson4.choose_durability.trial_of", mode=failed.spec.mode)
        return no_verdict(trial_of, failed.failure, failed.run_dir)
    cost = dict.fromkeys(DURABILITY_MODES, 0)
    for t in trials:
        cost[t.spec.mode] += REPEAT_COST * len(t.rerun_nodes) if t.resumed else LOSS_COST
    mine = [t for t in trials if t.spec.mode == choice]
    if cost[choice] == min(cost.values()):
        table = ", ".join(f"{m} {c:,}" for m, c in cost.items())
        said = say("lesson4.choose_durability.correct", choice=choice, trials=TRIALS, table=table)
        return Verdict("correct", said, mine[0].run_dir)
    lost = sum(not t.resumed for t in mine)
    repeated = sum(len(t.rerun_nodes) for t in mine if t.resumed)
    worst = max(mine, key=lambda t: LOSS_COST if not t.resumed else len(t.rerun_nodes))
    said = say(
        "lesson4.choose_durability.incorrect",
        trials=TRIALS,
        choice=choice,
        cost=cost[choice],
        lost=lost,
        repeated=repeated,
        **COSTS,
    )
    return Verdict("incorrect", said, worst.run_dir)


def sync_trial(keys: list[str]) -> dict[str, Measured]:
    """One real kill inside c, linear graph, sync: checkpoints at the kill, lines after."""

    [t] = run_trials([DurabilitySpec("linear", "sync")], 1)
    actual = {
        "checkpoints": Measured(
            t.checkpoints, say("lesson4.predict_sync_trial.at_the_kill"), t.run_dir, t.failure
        ),
        "ledger_lines": Measured(
            t.ledger_lines,
            say("lesson4.predict_sync_trial.ran_again", nodes=", ".join(t.rerun_nodes)),
            t.run_dir,
            t.failure,
        ),
    }
    return {k: actual[k] for k in keys}


choose_durability = Exercise(
    "lesson4.choose_durability",
    "04_choose_durability.py",
    starter='choice = "???"',
    judge=judge_durability,
    hint_fields={**COSTS, "slow_ms": SLOW_MS},
)

predict_sync_trial = Exercise(
    "lesson4.predict_sync_trial",
    "04_predict_sync_trial.py",
    starter='sync_trial = {"checkpoints": None, "ledger_lines": None}',
    judge=lambda predicted: judge_predictions(
        predicted, ("checkpoints", "ledger_lines"), sync_trial, WHOLE_NUMBER
    ),
)
