"""Predictions judged against real runs: the reader names a value per case, the lab runs only the
answered cases, and the verdict says which were wrong with what each run really gave, keeping the
open cases' answers hidden. Lessons 2, 3, 4, 5 and 7 ask for predictions: this is their one
judge."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import NamedTuple

from labkit.language import say
from labkit.room import client as room
from labkit.workshop.answers import Form, case_name, is_open
from labkit.workshop.verdicts import Verdict, also_in, no_verdict

__all__ = ["Measure", "Measured", "checking", "each", "judge_predictions"]

# The exercise being checked (Exercise.check sets it): its predictions go to the workshop's
# room, under the hub only, by that name.
EXERCISE: ContextVar[str | None] = ContextVar("exercise", default=None)


@contextlib.contextmanager
def checking(name: str) -> Iterator[None]:
    """While the exercise `name` judges an answer."""
    token = EXERCISE.set(name)
    try:
        yield
    finally:
        EXERCISE.reset(token)


class Measured(NamedTuple):
    """What a real run of one case gave: its value, what happened, its folder, and why it
    failed if a worker did not do what the run planned (then the value means nothing)."""

    value: object
    story: str
    run_dir: str | None
    failure: str | None = None


Measure = Callable[[list[str]], dict[str, Measured]]


def each(run_case: Callable[[str], Measured]) -> Measure:
    """A Measure that runs every asked case on its own."""
    return lambda cases: {case: run_case(case) for case in cases}


def judge_predictions(
    predicted: object, cases: Iterable[str], measure: Measure, form: Form
) -> Verdict:
    """Predictions against real runs of the answered cases only: `measure(cases)` maps each to
    what its real run gave. Open cases stay open and their answers hidden; an answer that is not
    of the `form` gets a form message before anything runs."""
    cases = list(cases)
    listed = ", ".join(cases)
    if not isinstance(predicted, dict):
        return Verdict("incorrect", say("checks.predictions.give_a_dict", cases=listed))
    named = [case_name(k) for k in predicted]
    unknown = [k for k in predicted if case_name(k) not in cases]
    twice = [k for k in cases if named.count(k) > 1]
    if unknown or twice:
        problem = (
            say("checks.predictions.not_a_case", names=unknown)
            if unknown
            else say("checks.predictions.given_twice", names=twice)
        )
        return Verdict(
            "incorrect", say("checks.predictions.the_cases", problem=problem, cases=listed)
        )
    given = dict(zip(named, predicted.values(), strict=True))
    answered = [k for k in cases if not is_open(given.get(k))]
    said = {k: form.read(given[k]) for k in answered}
    misread = [f"{k} = {given[k]!r}" for k in answered if said[k] is None]
    if misread:
        return Verdict(
            "incorrect",
            say("checks.predictions.misread", form=form.says, answers=", ".join(misread)),
        )
    if EXERCISE.get():  # to the room before anything runs (under the hub only; never waited for)
        room.predict_exercise(EXERCISE.get(), said)
    actual = measure(answered)
    failed = next((k for k in answered if actual[k].failure), None)
    if failed:
        return no_verdict(
            say("checks.predictions.real_run_of", case=failed),
            actual[failed].failure,
            actual[failed].run_dir,
        )
    still_open = [k for k in cases if k not in answered]
    wrong = [k for k in answered if said[k] != actual[k].value]
    also_open = (
        "\n" + say("checks.predictions.still_open", cases=", ".join(still_open))
        if still_open
        else ""
    )
    if wrong:
        footer = actual[wrong[0]].run_dir
        lines = [
            say(
                "checks.predictions.wrong",
                case=k,
                said=repr(given[k]),
                real=repr(actual[k].value),
                story=actual[k].story,
                look_in=also_in(actual[k].run_dir, footer),
            )
            for k in wrong
        ]
        right = len(answered) - len(wrong)
        summary = say("checks.predictions.summary", right=right, answered=len(answered))
        return Verdict("incorrect", "\n".join([summary, *lines]) + also_open, footer)
    if still_open:
        if len(answered) == 1:
            so_far = say("checks.predictions.so_far_one")
        else:
            so_far = say("checks.predictions.so_far", answered=len(answered))
        return Verdict("incomplete", so_far + also_open)
    return Verdict("correct", say("checks.predictions.all_match"), actual[cases[0]].run_dir)
