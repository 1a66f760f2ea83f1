"""Every exercise: its solution passes, its starter is "not attempted", plausible wrong answers
fail with a message in the lesson's terms. The checks run real crashes."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from labkit.exercises import lesson1, lesson2, lesson3, lesson4

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = {
    ex.name: (ex, lesson)
    for lesson, group in (("01", lesson1), ("02", lesson2), ("03", lesson3), ("04", lesson4))
    for ex in vars(group).values()
}


def answer_from(text: str, code: bool) -> object:
    """A function's source as it is; a value: the first assignment's value."""
    if code:
        return text
    namespace: dict = {}
    exec(text, namespace)
    target = next(n for n in ast.parse(text).body if isinstance(n, ast.Assign)).targets[0].id
    return namespace[target]


@pytest.mark.parametrize("name", list(EXERCISES))
def test_solution_passes(name):
    exercise, _ = EXERCISES[name]
    solution = (ROOT / "notebooks" / "solutions" / exercise.solution_file).read_text()
    verdict = exercise.check(answer_from(solution, exercise.code))
    assert verdict.status == "correct", str(verdict)


@pytest.mark.parametrize("name", list(EXERCISES))
def test_starter_is_not_attempted_and_appears_in_its_lesson(name):
    exercise, lesson = EXERCISES[name]
    assert exercise.check(answer_from(exercise.starter, exercise.code)).status == "not attempted"
    [notebook] = (ROOT / "notebooks").glob(f"{lesson}_*.ipynb")
    sources = ["".join(c["source"]) for c in json.loads(notebook.read_text())["cells"]]
    assert any(exercise.starter in s for s in sources), "the lesson must show this starter"
    assert any(f"# %load solutions/{exercise.solution_file}" in s for s in sources)
    assert exercise.hint() and exercise.solution().startswith("# %load solutions/")


WRONG = {
    "lesson1.predict_five_cases": (
        {
            "effect_first/effect": "consistent",
            "checkpoint_first/checkpoint": "lost",
            "atomic/in_transaction": "consistent",
            "atomic/committed": "consistent",
            "idempotent/effect": "consistent",
        },
        "effect_first/effect: you said 'consistent', the real run gave 'duplicate'",
    ),
    "lesson1.find_the_window": ({"effect"}, "checkpoint → lost"),
    "lesson2.safe_step": (
        "def my_step(control, effect, gate):\n"
        "    with control:\n        control.mark_done()\n"
        "    with effect:\n        effect.add_receipt_once(KEY, PAYLOAD)\n",
        "killed at `after commit 1 (control.db)`, recovery left done=1 and 0 receipts: lost",
    ),
    "lesson2.bug_hunt": (
        lesson2.bug_hunt.starter.replace("uuid.uuid4()", "uuid.uuid1()"),
        "recovery left done=1 and 2 receipts: duplicate; your step is not safe",
    ),
    "lesson3.operation_key": (
        'def operation_key(state):\n    return state["title"]\n',
        "two different requests (same title) got the same key",
    ),
    "lesson3.predict_kills": (
        {"before_create": 1, "after_create": 1, "paused": 1},
        "after_create: you said 1, the real run gave 3",
    ),
    "lesson4.choose_durability": ("exit", "exit cost 3,000"),
    "lesson4.predict_sync_trial": (
        {"checkpoints": 3, "ledger_lines": 8},
        "checkpoints: you said 3, the real run gave 4",
    ),
}


@pytest.mark.parametrize("name", list(EXERCISES))
def test_a_plausible_wrong_answer_fails_with_an_explanation(name):
    exercise, _ = EXERCISES[name]
    answer, message = WRONG[name]
    verdict = exercise.check(answer)
    assert verdict.status == "incorrect" and message in verdict.message, str(verdict)


def test_the_classic_unsafe_step_is_explained_at_its_kill_point():
    unsafe = lesson2.safe_step.starter.replace("my_step", "effect_first_step")
    verdict = lesson2.safe_step.check(unsafe)
    assert (
        verdict.status == "incorrect"
        and "killed at `after commit 1 (effect.db)`" in verdict.message
    )
    assert verdict.run_dir and Path(verdict.run_dir).exists()
