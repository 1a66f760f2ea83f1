"""Checked exercises, in the spirit of Kaggle's learntools: `check()`, `hint()`, `solution()`.

Every check runs the reader's answer through the real lab: real worker processes, real kills,
real recoveries. Untouched starter code reports "not attempted", not a failure; an error in
the reader's own code is shown as such, with their line; a wrong answer says what went wrong
in *this* answer (which kill point, what the files held, the failing run's folder) without
giving away the parts that were right or are still open.

The exercises themselves, lesson by lesson, are in `labkit.workshop`.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

__all__ = [
    "OPEN",
    "Exercise",
    "ReaderCodeError",
    "Verdict",
    "code_error",
    "each",
    "is_open",
    "judge_predictions",
    "normal",
    "source_of",
]

SOLUTIONS = Path(__file__).resolve().parents[2] / "notebooks" / "solutions"
OPEN = ("???", None, ...)  # what a starter holds where an answer goes
COLOURS = {
    "correct": "#009E73",
    "incorrect": "#D55E00",
    "incomplete": "#E69F00",
    "not attempted": "#999999",
    "error": "#CC79A7",
}


@dataclass
class Verdict:
    """What a check found; shown as a coloured line in a notebook, plain text elsewhere.

    status: "correct", "incorrect", "incomplete" (what is filled in is right, parts are open),
    "not attempted" (the starter as it was) or "error" (the reader's code raised)."""

    status: str
    message: str
    run_dir: str | None = None  # the folder of the run that shows it (the failing one)

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
        message = escape(self.message).replace("\n", "<br>")
        return (
            f'<div style="border-left:6px solid {COLOURS[self.status]};padding:4px 10px">'
            f"<b>{escape(self.status.upper())}</b>: {message}{folder}</div>"
        )


class Text(str):
    """A string that a notebook shows as plain text (a hint, a solution), without quotes."""

    def __repr__(self) -> str:
        return str(self)


class ReaderCodeError(Exception):
    """The reader's code could not run (a typo, a syntax error): a judge raises it, the check
    shows it as an error with the reader's line, not as a wrong answer."""

    def __init__(self, message: str, run_dir: str | None = None) -> None:
        super().__init__(message)
        self.run_dir = run_dir  # the run it happened in, if any


def is_open(value: object) -> bool:
    """A part the reader has not answered yet (the starter's placeholder)."""
    return any(value is mark or (isinstance(mark, str) and value == mark) for mark in OPEN)


def normal(value: object) -> object:
    """An answer in its natural form: "2" is 2, " Duplicate" is "duplicate", 4.0 is 4."""
    if isinstance(value, str):
        word = value.strip().lower()
        return int(word) if re.fullmatch(r"[+-]?\d+", word) else word
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def code_error(error: str, line: int | None, source: str) -> str:
    """The reader's error in one sentence, with the line of their code that raised it."""
    lines = source.splitlines()
    if line is None or not 0 < line <= len(lines):
        return f"your code raised {error}"
    return f"your code raised {error}, at line {line}: {lines[line - 1].strip()}"


def normalized(source: str) -> str:
    """Code without comments, blank lines or indentation differences, to spot untouched starters."""
    lines = (line.split("#")[0].rstrip() for line in textwrap.dedent(source).splitlines())
    return "\n".join(line for line in lines if line.strip())


def source_of(answer: Callable | str) -> tuple[str, str]:
    """(source, function name) of a function, or of the first function in a source string."""
    try:
        source = textwrap.dedent(answer if isinstance(answer, str) else inspect.getsource(answer))
        tree = ast.parse(source)
    except SyntaxError as error:
        raise ReaderCodeError(
            code_error(f"SyntaxError: {error.msg}", error.lineno, source)
        ) from None
    except (OSError, TypeError) as error:
        raise ReaderCodeError(f"the check needs a function defined in a cell ({error})") from None
    names = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    if not names:
        raise ReaderCodeError("the check needs a function (def ...), and found none")
    return source, names[0]


@dataclass
class Exercise:
    """One checked exercise. `judge(answer)` runs the real lab and returns a Verdict."""

    name: str
    solution_file: str
    starter: str  # the text of the cell the reader edits, exactly as the lesson shows it
    judge: Callable[[object], Verdict]
    hints: list[str] = field(default_factory=list)
    code: bool = False  # the answer is a function (else: a value such as a dict or a word)
    hints_shown: int = 0

    def untouched(self, answer: object) -> bool:
        if self.code:
            try:
                return normalized(source_of(answer)[0]) == normalized(self.starter)
            except ReaderCodeError:
                return False
        if isinstance(answer, dict):
            return all(is_open(value) for value in answer.values())
        if isinstance(answer, set | list | tuple):
            return all(is_open(value) for value in answer) and bool(answer)
        return is_open(answer)

    def check(self, answer: object) -> Verdict:
        if self.untouched(answer):
            return Verdict(
                "not attempted", f"change the starter, then check again (hint: {self.name}.hint())"
            )
        try:
            return self.judge(answer)
        except ReaderCodeError as error:
            return Verdict("error", f"{error}\nMend it and check again.", error.run_dir)

    def hint(self, number: int | None = None) -> Text:
        """The next hint (or hint `number`): each says something the ones before did not."""
        self.hints_shown = min(number or self.hints_shown + 1, len(self.hints))
        last = self.hints_shown == len(self.hints)
        text = f"Hint {self.hints_shown} of {len(self.hints)}: {self.hints[self.hints_shown - 1]}"
        after = f"\nThat was the last hint; {self.name}.solution() shows the answer."
        return Text(text + (after if last else f"\n(Call {self.name}.hint() for the next one.)"))

    def solution(self) -> Text:
        """The solution, for when you are done trying (the lesson's `# %load` line loads it)."""
        path = SOLUTIONS / self.solution_file
        return Text(f"# %load solutions/{self.solution_file}\n{path.read_text()}")


Measured = tuple[object, str, str | None]  # a real run's value, what happened, its folder
Measure = Callable[[list[str]], dict[str, Measured]]


def each(run_case: Callable[[str], Measured]) -> Measure:
    """A Measure that runs every asked case on its own."""
    return lambda cases: {case: run_case(case) for case in cases}


def judge_predictions(predicted: object, cases: Iterable[str], measure: Measure) -> Verdict:
    """Predictions against real runs of the answered cases only: `measure(cases)` maps each to
    (value, what happened, run folder). Open cases stay open; their answers stay hidden."""
    cases = list(cases)
    if not isinstance(predicted, dict):
        return Verdict("incorrect", f"give a dict with one prediction for each of: {cases}")
    unknown = [k for k in predicted if k not in cases]
    if unknown:
        return Verdict("incorrect", f"not a case of this exercise: {unknown}; the cases: {cases}")
    answered = [k for k in cases if not is_open(predicted.get(k))]
    still_open = [k for k in cases if k not in answered]
    actual = measure(answered)
    wrong = [k for k in answered if normal(predicted[k]) != normal(actual[k][0])]
    also_open = f"\nStill open: {', '.join(still_open)}." if still_open else ""
    if wrong:
        lines = [
            f"{k}: you said {predicted[k]!r}, the real run gave {actual[k][0]!r} "
            f"({actual[k][1]}; look in {actual[k][2]})"
            for k in wrong
        ]
        right = len(answered) - len(wrong)
        summary = f"{right} of your {len(answered)} predictions match real runs; not these:\n"
        return Verdict("incorrect", summary + "\n".join(lines) + also_open, actual[wrong[0]][2])
    if still_open:
        made = (
            "prediction you made matches a real run"
            if len(answered) == 1
            else f"{len(answered)} predictions you made match real runs"
        )
        return Verdict("incomplete", f"so far so good: the {made}.{also_open}")
    return Verdict("correct", "every prediction matches a real run", actual[cases[0]][2])
