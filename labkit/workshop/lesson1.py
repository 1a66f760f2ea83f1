"""Lesson 1 · The commit window (notebooks/01_the_commit_window.ipynb): its checked exercise.

lesson1.find_the_window.check(window)   # .hint(), .solution()
"""

from __future__ import annotations

from labkit.studies.commit_window.orders import get_order
from labkit.studies.commit_window.outcome import describe_state
from labkit.studies.commit_window.runs import run
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
        return Verdict("incorrect", 'give a set of kill points, such as {"start"}')
    given = [p for p in points if not is_open(p)]
    not_words = [p for p in given if word(p) is None]
    if not_words:
        return Verdict(
            "incorrect",
            f'each kill point is a word, such as "start"; not {", ".join(map(repr, not_words))}',
        )
    named = {word(p) for p in given}
    unknown = sorted(named - set(order.kill_points))
    if unknown:
        return Verdict(
            "incorrect",
            f"not a kill point of checkpoint_first: {unknown}; "
            f"its points: {', '.join(order.kill_points)}",
        )
    runs = {point: run(order.name, point) for point in order.kill_points}
    failed = next((r for r in runs.values() if r.failure), None)
    if failed:
        return no_verdict(
            f"the real run killed at {failed.spec.kill_at}", failed.failure, str(failed.run_dir)
        )
    losing = {point for point, r in runs.items() if r.outcome == "lost"}
    if named == losing:
        where = sorted(losing) or ["none"]
        folder = str(runs[where[0]].run_dir) if losing else None
        return Verdict("correct", f"the receipt is lost by a kill at: {', '.join(where)}", folder)
    not_lost = [p for p in order.kill_points if p in named - losing]
    footer = str(runs[not_lost[0]].run_dir) if not_lost else None
    lines = [
        f"killed at {p}, recovery left {describe_state(runs[p].after)}: not lost"
        f"{also_in(runs[p].run_dir, footer)}"
        for p in not_lost
    ]
    if losing - named:
        lines.append("your set leaves out one or more points where a kill loses the receipt")
    return Verdict("incorrect", "\n".join(lines), footer)


find_the_window = Exercise(
    "lesson1.find_the_window",
    "01_find_the_window.py",
    starter='window = {"???"}',
    judge=judge_window,
    hints=[
        "checkpoint_first passes `start`, commits done=1 (then passes `checkpoint`), "
        "commits the receipt (then passes `effect`).",
        "For each point, write down done and receipts as a kill there leaves them; "
        "recovery runs the step only if done=0.",
        "Lost means done=1 and no receipt: recovery skips a step whose effect never "
        "happened. Which point lies after one commit and before the other?",
    ],
)
