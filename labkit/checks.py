"""Checked exercises, in the spirit of Kaggle's learntools: `check()`, `hint()`, `solution()`.

Every check runs the reader's answer through the real lab: real worker processes, real kills,
real recoveries. Untouched starter code reports "not attempted", not a failure; a wrong
answer says what went wrong in the lesson's terms and names the run folder to look at.

The exercises themselves, lesson by lesson, are in `labkit.exercises`.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

__all__ = ["UNANSWERED", "Exercise", "Verdict", "compare", "source_of"]

SOLUTIONS = Path(__file__).resolve().parent.parent / "notebooks" / "solutions"
UNANSWERED = "???"
COLOURS = {"correct": "#009E73", "incorrect": "#D55E00", "not attempted": "#999999"}


@dataclass
class Verdict:
    """What a check found; shown as a coloured line in a notebook, plain text elsewhere."""

    status: str  # "correct", "incorrect" or "not attempted"
    message: str
    run_dir: str | None = None

    def __bool__(self) -> bool:
        return self.status == "correct"

    def __str__(self) -> str:
        folder = f"\n(look in {self.run_dir})" if self.run_dir else ""
        return f"{self.status.upper()}: {self.message}{folder}"

    def _repr_html_(self) -> str:
        folder = (
            f"<br><small>look in <code>{escape(self.run_dir)}</code></small>"
            if self.run_dir
            else ""
        )
        return (
            f'<div style="border-left:6px solid {COLOURS[self.status]};padding:4px 10px">'
            f"<b>{escape(self.status.upper())}</b>: {escape(self.message)}{folder}</div>"
        )


class Text(str):
    """A string that a notebook shows as plain text (a hint, a solution), without quotes."""

    def __repr__(self) -> str:
        return str(self)


def normalized(source: str) -> str:
    """Code without comments, blank lines or indentation differences, to spot untouched starters."""
    lines = (line.split("#")[0].rstrip() for line in textwrap.dedent(source).splitlines())
    return "\n".join(line for line in lines if line.strip())


def source_of(answer: Callable | str) -> tuple[str, str]:
    """(source, function name) of a function, or of the first function in a source string."""
    source = textwrap.dedent(answer if isinstance(answer, str) else inspect.getsource(answer))
    name = next(node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef))
    return source, name


@dataclass
class Exercise:
    """One checked exercise. `judge(answer)` runs the real lab and returns a Verdict."""

    name: str
    solution_file: str
    starter: str  # the text of the cell the reader edits, exactly as the lesson shows it
    judge: Callable[[object], Verdict]
    hints: list[str] = field(default_factory=list)
    code: bool = False  # the answer is a function (else: a value such as a dict or a word)

    def untouched(self, answer: object) -> bool:
        if self.code:
            return normalized(source_of(answer)[0]) == normalized(self.starter)
        values = answer.values() if isinstance(answer, dict) else [answer]
        return all(value == UNANSWERED or value == {UNANSWERED} for value in values)

    def check(self, answer: object) -> Verdict:
        if self.untouched(answer):
            return Verdict(
                "not attempted", f"change the starter, then check again (hint: {self.name}.hint())"
            )
        return self.judge(answer)

    def hint(self, number: int = 1) -> Text:
        """Hint 1, 2, ...: each says a little more."""
        return Text(self.hints[min(number, len(self.hints)) - 1])

    def solution(self) -> Text:
        """The solution, for when you are done trying (the lesson's `# %load` line loads it)."""
        path = SOLUTIONS / self.solution_file
        return Text(f"# %load solutions/{self.solution_file}\n{path.read_text()}")


def compare(predicted: dict, actual: dict[str, tuple[object, str, str | None]]) -> Verdict:
    """Predictions against real runs: actual maps each key to (value, what happened, folder)."""
    unanswered = [k for k, v in predicted.items() if v == UNANSWERED]
    wrong = [
        f"{k}: you said {predicted.get(k)!r}, the real run gave {value!r} ({story})"
        for k, (value, story, _) in actual.items()
        if predicted.get(k) != value
    ]
    folder = next((run_dir for _, _, run_dir in actual.values()), None)
    if wrong:
        return Verdict("incorrect", "; ".join(wrong), folder)
    if unanswered:
        return Verdict("incorrect", f"still to predict: {', '.join(unanswered)}")
    return Verdict("correct", "every prediction matches a real run", folder)
