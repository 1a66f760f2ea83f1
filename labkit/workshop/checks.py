"""Checked exercises, in the spirit of Kaggle's learntools: `check()`, `hint()`, `solution()`.

Every check runs the reader's answer through the real lab: real worker processes, real kills,
real recoveries. Untouched starter code reports "not attempted", not a failure; an error in
the reader's own code is shown as such, with their line; a wrong answer says what went wrong
in *this* answer (which kill point, what the files held, the failing run's folder) without
giving away the parts that were right or are still open.

Every word a reader sees comes from the catalogue (`labkit.language`), looked up when it is
shown: the verdict's word from its status code (the code stays, tests compare it), hints from
their keys, and the shared sentences from `checks.toml`, whose keys every lesson may reuse.

The exercises themselves, lesson by lesson, are in `labkit.workshop`. They import the shared
machinery from here; each part lives where its job is: verdicts (what a check says), answers
(how an answer is read), reader_code (the reader's code and its errors), predictions (values
judged against real runs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from labkit.bench.errors import check_int
from labkit.language import say
from labkit.workshop.answers import (
    OPEN,
    WHOLE_NUMBER,
    Form,
    case_name,
    is_open,
    lone,
    one_of,
    read_whole_number,
    word,
    written_count,
)
from labkit.workshop.predictions import Measure, Measured, checking, each, judge_predictions
from labkit.workshop.reader_code import (
    check_worker,
    code_error,
    lab_line_raised,
    normalized,
    source_of,
    worker_code_error,
    worker_error,
)
from labkit.workshop.verdicts import (
    COLOURS,
    ReaderCodeError,
    Text,
    UnmetExpectation,
    Verdict,
    also_in,
    no_verdict,
)

__all__ = [
    "COLOURS",
    "OPEN",
    "WHOLE_NUMBER",
    "Exercise",
    "Form",
    "Measure",
    "Measured",
    "ReaderCodeError",
    "Text",
    "UnmetExpectation",
    "Verdict",
    "also_in",
    "case_name",
    "check_worker",
    "code_error",
    "each",
    "is_open",
    "judge_predictions",
    "lab_line_raised",
    "lone",
    "no_verdict",
    "normalized",
    "one_of",
    "read_whole_number",
    "source_of",
    "word",
    "written_count",
    "worker_code_error",
    "worker_error",
]

SOLUTIONS = Path(__file__).resolve().parents[2] / "notebooks" / "solutions"


@dataclass
class Exercise:
    """One checked exercise. `judge(answer)` runs the real lab and returns a Verdict; its
    hints are the catalogue keys named after it ("lesson2.safe_step.hint1" to
    "lesson2.safe_step.hint3"), each said in the language of the moment."""

    name: str
    solution_file: str
    starter: str  # the text of the cell the reader edits, exactly as the lesson shows it
    judge: Callable[[object], Verdict]
    hint_count: int = 3  # the catalogue holds `<name>.hint1` to `<name>.hint<hint_count>`
    code: bool = False  # the answer is a function (else: a value such as a dict or a word)
    hints_shown: int = 0
    hint_fields: dict[str, object] = field(default_factory=dict)  # values the hints name

    @property
    def hints(self) -> list[str]:
        """The hints' catalogue keys, in the order shown."""
        return [f"{self.name}.hint{n}" for n in range(1, self.hint_count + 1)]

    def untouched(self, answer: object) -> bool:
        """The starter as the lesson shows it (a placeholder in every part)."""
        if self.code:
            try:
                return normalized(source_of(answer)[0]) == normalized(self.starter)
            except ReaderCodeError:
                return False
        if isinstance(answer, dict):
            return all(is_open(value) for value in answer.values())
        if isinstance(answer, set | frozenset | list | tuple):
            return all(is_open(value) for value in answer) and bool(answer)
        return is_open(answer)

    def check(self, answer: object) -> Verdict:
        if self.untouched(answer):
            return Verdict("not attempted", say("checks.check.not_attempted", name=self.name))
        try:
            with checking(self.name):  # its predictions, if any, go to the workshop's room
                return self.judge(answer)
        except ReaderCodeError as error:
            return Verdict("error", say("checks.check.mend_it", error=error), error.run_dir)
        except UnmetExpectation as error:
            return Verdict("incorrect", str(error), error.run_dir)

    def hint(self, number: int | None = None) -> Text:
        """The next hint (or hint `number`, 1 to the last): each says something the ones
        before did not; asked again after the last, the last."""
        if number is not None:
            number = check_int("hint number", number, 1, len(self.hints))
        self.hints_shown = number or min(self.hints_shown + 1, len(self.hints))
        text = say(
            "checks.hint.header",
            number=self.hints_shown,
            total=len(self.hints),
            text=say(self.hints[self.hints_shown - 1], **self.hint_fields),
        )
        after = "last" if self.hints_shown == len(self.hints) else "next"
        return Text(f"{text}\n{say(f'checks.hint.{after}', name=self.name)}")

    def solution(self) -> Text:
        """The solution, for when you are done trying (the lesson's `# %load` line loads it)."""
        path = SOLUTIONS / self.solution_file
        header = say("checks.solution.header", file=self.solution_file)
        return Text(f"{header}\n{path.read_text()}")
