"""Lesson 1 · The commit window (notebooks/01_the_commit_window.ipynb): its checked exercise.

lesson1.find_the_window.check(window)   # .hint(), .solution()

What the verdicts and hints say is in the catalogue, `lesson1.toml`.
"""

from __future__ import annotations

from labkit.language import say
from labkit.studies.commit_window.orders import get_order
from labkit.studies.commit_window.runs import run
from labkit.views.commit_window_words import describe_state
from labkit.workshop.checks import Exercise, Verdict, also_in, is_open, no_verdict, word

__all__ = ["find_the_window"]


def judge_window(points: object) -> Verdict:
    """Every kill point of checkpoint_first, for real: the answer must name exactly the ones
    that lose the receipt (a placeholder left beside an answer is forgiven). A wrong set hears
    which of its points do not lose it, and that it left some out, never how many."""

    order = get_order("checkpoint_first")
    if isinstance(points, str):
        points = {points}
    if not isinstance(points, set | frozenset | list | tuple):
        return Verdict("incorrect", say("lesson1.find_the_window.give_a_set"))
    given = [p for p in points if not is_open(p)]
    not_words = [p for p in given if word(p) is None]
    if not_words:
        answers = ", ".join(map(repr, not_words))
        return Verdict("incorrect", say("lesson1.find_the_window.not_words", answers=answers))
    named = {word(p) for p in given}
    unknown = sorted(named - set(order.kill_points))
    if unknown:
        its_points = ", ".join(order.kill_points)
        return Verdict(
            "incorrect",
            say("lesson1.find_the_window.unknown", unknown=unknown, points=its_points),
        )
    runs = {point: run(order.name, point) for point in order.kill_points}
    failed = next((r for r in runs.values() if r.failure), None)
    if failed:
        killed_at = say("lesson1.find_the_window.killed_at", point=failed.spec.kill_at)
        return no_verdict(killed_at, failed.failure, str(failed.run_dir))
    losing = {point for point, r in runs.items() if r.outcome == "lost"}
    if named == losing:
        where = ", ".join(sorted(losing)) or say("checks.words.none")
        folder = str(runs[min(losing)].run_dir) if losing else None
        return Verdict("correct", say("lesson1.find_the_window.correct", points=where), folder)
    not_lost = [p for p in order.kill_points if p in named - losing]
    footer = str(runs[not_lost[0]].run_dir) if not_lost else None
    lines = [
        say(
            "lesson1.find_the_window.not_lost",
            point=p,
            state=describe_state(runs[p].after),
            look_in=also_in(runs[p].run_dir, footer),
        )
        for p in not_lost
    ]
    if losing - named:
        lines.append(say("lesson1.find_the_window.left_out"))
    return Verdict("incorrect", "\n".join(lines), footer)


find_the_window = Exercise(
    "lesson1.find_the_window",
    "01_find_the_window.py",
    starter='window = {"???"}',
    judge=judge_window,
)
