"""The Chinese edition of lessons 5-9's checked exercises: with Chinese chosen, a real check of a
wrong answer (one per exercise, the cheapest of tests/wrong_answers.py) says why in Chinese, and
none of the lesson's English sentences slips through; every other answer of lessons 5-8's
catalogue is judged as in English (incorrect, correct, error), in Chinese; hints are Chinese
too. The English verdicts are held to their words by tests/test_exercises.py."""

from __future__ import annotations

import re

import pytest
from chinese import CJK, assert_chinese
from wrong_answers import ERRORS, RIGHT, WRONG

from labkit.workshop import lesson5, lesson6, lesson7, lesson8, lesson9

LESSONS = (lesson5, lesson6, lesson7, lesson8, lesson9)
EXERCISES = {ex.name: ex for lesson in LESSONS for ex in map(lesson.__dict__.get, lesson.__all__)}

# For each exercise, the wrong answer of tests/wrong_answers.py that costs least to judge for
# real (it fails at the check's first run, or runs one case): the check must still run.
CHEAPEST = {
    "lesson5.predict_tickets": "a timeout means nothing happened",
    "lesson5.recover_unknown": "a new key",
    "lesson5.idempotent_consumer": "never applies",
    "lesson6.claim_statement": "taken back by the same name",
    "lesson6.fenced_receiver": "the write every time, a print beside it",
    "lesson7.predict_crash": "an open transaction is kept",
    "lesson7.one_transaction": "effect first, in two transactions",
    "lesson8.charge_once": "a new uuid4 key per attempt",
    "lesson8.drain_safe": "no handler: SIGTERM ends it",
    "lesson9.green_matrix": "no receipt at all",
}
ONE_CASE = {"lesson5.predict_tickets": "new_key"}  # a prediction: ask only this case
# Words of another system a verdict quotes as they are: the client's error from Postgres.
QUOTES_ENGLISH = {"lesson7.predict_crash"}
ENGLISH_RUN = re.compile(r"[A-Za-z]+(?: [A-Za-z]+){3,}")  # four English words in a row


def lesson_of(exercise: str) -> tuple[str]:
    """The catalogue file of an exercise's own words: lesson5.toml for "lesson5.recover_unknown"."""
    return (exercise.split(".")[0],)


def test_every_exercise_of_lessons_5_to_9_has_a_cheap_wrong_answer_here():
    assert set(CHEAPEST) == set(EXERCISES)
    assert all(label in WRONG[name] for name, label in CHEAPEST.items())


@pytest.mark.parametrize("name", list(CHEAPEST))
def test_a_wrong_answer_is_told_why_in_chinese(name, chinese):
    answer, _ = WRONG[name][CHEAPEST[name]]
    if name in ONE_CASE:
        answer = {ONE_CASE[name]: answer[ONE_CASE[name]]}
    verdict = EXERCISES[name].check(answer)
    assert verdict.status == "incorrect", str(verdict)  # the code stays a code
    assert CJK.search(verdict.message), str(verdict)
    assert str(verdict).startswith("不正确"), str(verdict)
    assert_chinese(str(verdict), lesson_of(name))  # none of the lesson's English sentences
    if name not in QUOTES_ENGLISH:  # nor a study's English (what a failure or outcome means)
        assert ENGLISH_RUN.findall(verdict.message) == [], str(verdict)


CATALOGUES = {"incorrect": WRONG, "correct": RIGHT, "error": ERRORS}  # by the status they get


def judged_alike() -> list[tuple[str, str, str]]:
    """(status, exercise, label) of every answer of lessons 5-8's catalogue but the cheapest
    (judged above, more strictly): what its English check says, its Chinese must say too."""
    return [
        (status, name, label)
        for status, catalogue in CATALOGUES.items()
        for name, answers in catalogue.items()
        if name.split(".")[0] in ("lesson5", "lesson6", "lesson7", "lesson8")
        for label in answers
        if CHEAPEST[name] != label
    ]


@pytest.mark.parametrize(("status", "name", "label"), judged_alike())
def test_every_answer_of_lessons_5_to_8_is_judged_alike_in_chinese(status, name, label, chinese):
    entry = CATALOGUES[status][name][label]
    answer = entry if status == "correct" else entry[0]  # WRONG and ERRORS hold (answer, why)
    verdict = EXERCISES[name].check(answer)
    assert verdict.status == status, str(verdict)
    assert_chinese(str(verdict), (*lesson_of(name), "checks"))


@pytest.mark.parametrize("name", list(CHEAPEST))
def test_every_hint_is_chinese(name, chinese):
    exercise = EXERCISES[name]
    hints = [exercise.hint(n) for n in range(1, len(exercise.hints) + 1)]
    exercise.hints_shown = 0
    assert all(CJK.search(h) for h in hints)
    assert_chinese("\n".join(hints), lesson_of(name))
