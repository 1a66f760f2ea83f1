"""Lesson 4 · Durability under SIGKILL (notebooks/04_durability_under_sigkill.ipynb): its checked
exercises. The trials run in labkit's trial server: the kernel never imports LangGraph.

    lesson4.choose_durability.check(choice)   # .hint(), .solution()
"""

from __future__ import annotations

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


def judge_durability(choice: object) -> Verdict:
    """Every mode, TRIALS real kills each on the slow checkpointer: the choice must cost least.
    A trial whose worker failed by itself (its own error, a timeout) has no outcome to cost:
    then there is no verdict, rather than a verdict from it."""

    modes = ", ".join(DURABILITY_MODES)
    if word(choice) not in DURABILITY_MODES:
        return Verdict("incorrect", f"{choice!r} is not a durability mode; choose one of: {modes}")
    choice = word(choice)
    trials = run_trials([DurabilitySpec("linear", m, SLOW_MS) for m in DURABILITY_MODES], TRIALS)
    failed = next((t for t in trials if t.failure), None)
    if failed:
        return no_verdict(f"a real trial of {failed.spec.mode}", failed.failure, failed.run_dir)
    cost = dict.fromkeys(DURABILITY_MODES, 0)
    for t in trials:
        cost[t.spec.mode] += REPEAT_COST * len(t.rerun_nodes) if t.resumed else LOSS_COST
    mine = [t for t in trials if t.spec.mode == choice]
    if cost[choice] == min(cost.values()):
        table = ", ".join(f"{m} {c:,}" for m, c in cost.items())
        return Verdict(
            "correct",
            f"{choice} cost the least in {TRIALS} real kills each: {table}",
            mine[0].run_dir,
        )
    lost = sum(not t.resumed for t in mine)
    repeated = sum(len(t.rerun_nodes) for t in mine if t.resumed)
    worst = max(mine, key=lambda t: LOSS_COST if not t.resumed else len(t.rerun_nodes))
    return Verdict(
        "incorrect",
        f"in {TRIALS} real kills, {choice} cost {cost[choice]:,}: {lost} runs lost "
        f"({LOSS_COST:,} each) and {repeated} node runs repeated ({REPEAT_COST} each); "
        "another mode cost less",
        worst.run_dir,
    )


def sync_trial(keys: list[str]) -> dict[str, Measured]:
    """One real kill inside c, linear graph, sync: checkpoints at the kill, lines after."""

    [t] = run_trials([DurabilitySpec("linear", "sync")], 1)
    actual = {
        "checkpoints": Measured(t.checkpoints, "at the kill", t.run_dir, t.failure),
        "ledger_lines": Measured(
            t.ledger_lines, f"ran again: {', '.join(t.rerun_nodes)}", t.run_dir, t.failure
        ),
    }
    return {k: actual[k] for k in keys}


choose_durability = Exercise(
    "lesson4.choose_durability",
    "04_choose_durability.py",
    starter='choice = "???"',
    judge=judge_durability,
    hints=[
        f"A lost run costs {LOSS_COST:,}, each node run again {REPEAT_COST}; the "
        f"checkpointer takes {SLOW_MS} ms a write.",
        "exit saves only when the graph exits, which a SIGKILL skips: what is left for "
        "recovery to resume from?",
        "async lets the nodes run ahead of the slow writes; sync waits for each one. Which "
        "mode still holds a checkpoint when the kill lands?",
    ],
)

predict_sync_trial = Exercise(
    "lesson4.predict_sync_trial",
    "04_predict_sync_trial.py",
    starter='sync_trial = {"checkpoints": None, "ledger_lines": None}',
    judge=lambda predicted: judge_predictions(
        predicted, ("checkpoints", "ledger_lines"), sync_trial, WHOLE_NUMBER
    ),
    hints=[
        "Count one checkpoint for the input and one per finished super-step before c.",
        "The super-steps before c are __start__, a and b.",
        "A clean run writes 8 ledger lines (the start and end of a, b, c, d); recovery "
        "resumes at c.",
    ],
)
