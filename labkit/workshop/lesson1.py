"""Lesson 1 · The commit window (notebooks/01_the_commit_window.ipynb): its checked exercise.

lesson1.find_the_window.check(window)   # .hint(), .solution()
"""

from __future__ import annotations

from labkit.studies.commit_window.orders import get_order
from labkit.studies.commit_window.outcome import describe_state
from labkit.studies.commit_window.runs import run
from labkit.workshop.checks import Exercise, Verdict, is_open, normal

__all__ = ["find_the_window"]


def judge_window(points: object) -> Verdict:
    """Every kill point of checkpoint_first, for real: the answer must name exactly the ones
    that lose the receipt (a placeholder left beside an answer is forgiven)."""

    order = get_order("checkpoint_first")
    if isinstance(points, str):
        points = {points}
    if not isinstance(points, set | list | tuple):
        return Verdict("incorrect", 'give a set of kill points, such as {"start"}')
    named = {normal(p) for p in points if not is_open(p)}
    unknown = sorted(named - set(order.kill_points), key=str)
    if unknown:
        return Verdict(
            "incorrect",
            f"not a kill point of checkpoint_first: {unknown}; "
            f"its points: {', '.join(order.kill_points)}",
        )
    runs = {point: run(order.name, point) for point in order.kill_points}
    losing = {point for point, r in runs.items() if (r.after.done, r.after.receipts) == (1, 0)}
    if named == losing:
        where = sorted(losing) or ["none"]
        folder = str(runs[where[0]].run_dir) if losing else None
        return Verdict("correct", f"the receipt is lost by a kill at: {', '.join(where)}", folder)
    lines = [
        f"killed at {p}, recovery left {describe_state(runs[p].after)}: not lost "
        f"(look in {runs[p].run_dir})"
        for p in order.kill_points
        if p in named - losing
    ]
    missing = len(losing - named)
    if missing:
        points = "point where a crash loses" if missing == 1 else "points where a crash loses"
        lines.append(f"{missing} kill {points} the receipt: not in your set")
    wrong_dirs = [str(runs[p].run_dir) for p in order.kill_points if p in named - losing]
    return Verdict("incorrect", "\n".join(lines), wrong_dirs[0] if wrong_dirs else None)


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
