"""Checked exercises, in the spirit of Kaggle's learntools: `check()`, `hint()`, `solution()`.

Every check runs the reader's answer through the real lab: real worker processes, real kills,
real recoveries. Untouched starter code reports "not attempted", not a failure; an error in
the reader's own code is shown as such, with their line; a wrong answer says what went wrong
in *this* answer (which kill point, what the files held, the failing run's folder) without
giving away the parts that were right or are still open.

Every word a reader sees comes from the catalogue (`labkit.language`), looked up when it is
shown: the verdict's word from its status code (the code stays, tests compare it), hints from
their keys, and the shared sentences from `checks.toml`, whose keys every lesson may reuse.

The exercises themselves, lesson by lesson, are in `labkit.workshop`.
"""

from __future__ import annotations

import ast
import inspect
import numbers
import re
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import NamedTuple

from labkit.bench.errors import check_int
from labkit.bench.launcher import WorkerReport
from labkit.language import say

__all__ = [
    "OPEN",
    "WHOLE_NUMBER",
    "Exercise",
    "Form",
    "Measured",
    "ReaderCodeError",
    "UnmetExpectation",
    "Verdict",
    "also_in",
    "check_worker",
    "code_error",
    "worker_code_error",
    "worker_error",
    "each",
    "is_open",
    "judge_predictions",
    "no_verdict",
    "one_of",
    "source_of",
    "word",
]

SOLUTIONS = Path(__file__).resolve().parents[2] / "notebooks" / "solutions"
OPEN = ("???", None, ...)  # what a starter holds where an answer goes
COLOURS = {
    "correct": "#009E73",
    "incorrect": "#D55E00",
    "incomplete": "#E69F00",
    "not attempted": "#999999",
    "error": "#CC79A7",
    "no verdict": "#56B4E9",
}


@dataclass
class Verdict:
    """What a check found; shown as a coloured line in a notebook, plain text elsewhere.

    status: "correct", "incorrect", "incomplete" (what is filled in is right, parts are open),
    "not attempted" (the starter as it was), "error" (the reader's code raised) or "no verdict"
    (a run of the lab failed by itself, so it says nothing about the answer). The status is a
    code; the reader sees its word in the chosen language (`checks.verdict.<code>`)."""

    status: str
    message: str  # in the language chosen when the check ran
    run_dir: str | None = None  # the folder of the run that shows it (the failing one)

    def __bool__(self) -> bool:
        return self.status == "correct"

    def word(self) -> str:
        """The status as the reader reads it: "INCORRECT", "不正确"."""
        return say(f"checks.verdict.{self.status.replace(' ', '_')}")

    def __str__(self) -> str:
        folder = "\n" + say("checks.look_in", folder=self.run_dir) if self.run_dir else ""
        return say("checks.verdict_line", verdict=self.word(), message=self.message) + folder

    def _repr_html_(self) -> str:
        code = f"<code>{escape(self.run_dir)}</code>" if self.run_dir else ""
        folder = f"<br><small>{say('checks.look_in_html', folder=code)}</small>" if code else ""
        line = say(
            "checks.verdict_line",
            verdict=f"<b>{escape(self.word())}</b>",
            message=escape(self.message).replace("\n", "<br>"),
        )
        return (
            f'<div style="border-left:6px solid {COLOURS[self.status]};padding:4px 10px">'
            f"{line}{folder}</div>"
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


class UnmetExpectation(Exception):
    """The reader's code returned, and the lab's own line after it failed on what it left (a
    transaction it committed, a value the lab cannot use): not their error, since no line of
    theirs raised it, but what the lab expects of their code, unmet. A judge raises it saying
    what the lab expects; the check shows it as a wrong answer."""

    def __init__(self, message: str, run_dir: str | None = None) -> None:
        super().__init__(message)
        self.run_dir = run_dir


def is_open(value: object) -> bool:
    """A part the reader has not answered yet (the starter's placeholder)."""
    if isinstance(value, str):
        return value.strip() in [mark for mark in OPEN if isinstance(mark, str)]
    return any(value is mark for mark in OPEN)


def word(value: object) -> str | None:
    """A one-word answer in its natural form (" Lost." is "lost"), or None if it is not text."""
    if not isinstance(value, str):
        return None
    return " ".join(value.strip().rstrip(".!").lower().split())


def lone(value: object) -> object:
    """The one item of a one-item list, tuple or set (["duplicate"] means "duplicate")."""
    if isinstance(value, list | tuple | set | frozenset) and len(value) == 1:
        [value] = value
    return value


class Form(NamedTuple):
    """What every prediction of an exercise is: `says` tells the reader (the catalogue's `key`
    with its `fields`, looked up when shown), `read` gives an answer's natural value, or None
    for one that is not such a value (it is never run)."""

    key: str
    read: Callable[[object], object]
    fields: dict[str, object] = {}  # never changed, so one shared default is safe

    @property
    def says(self) -> str:
        return say(self.key, **self.fields)


def one_of(*words: str) -> Form:
    """One of `words`, in any case, with a full stop or an ending: "Duplicated" is "duplicate".
    The words are codes the reader types, so they stay as they are in every language."""

    def read(value: object) -> str | None:
        given = word(lone(value))
        return next((w for w in words if given in (w, f"{w}d", f"{w}s")), None)

    return Form("checks.form.one_of", read, {"words": ", ".join(words)})


def read_whole_number(value: object) -> int | None:
    """A count: 2, 2.0, "2", "2.0" or "2 tickets" is 2; "two", 2.5, True or -1 is not one."""
    value = lone(value)
    text = re.fullmatch(r"(\d+)(?:\.0*)?(?: *[a-z_]+)?", word(value) or "")
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Real) and float(value).is_integer():
        return int(value) if value >= 0 else None
    return int(text[1]) if text else None


WHOLE_NUMBER = Form("checks.form.whole_number", read_whole_number)


def code_error(error: str, line: int | None, source: str) -> str:
    """The reader's error in one sentence, with the line of their code that raised it."""
    lines = source.splitlines()
    if line is None or not 0 < line <= len(lines):
        return say("checks.code.raised", error=error)
    return say("checks.code.raised_at", error=error, line=line, code=lines[line - 1].strip())


def worker_code_error(error: str, line: int | None, source: str) -> str:
    """`code_error` for code that ran in a worker, which runs only the function's own source:
    a NameError there is most likely a name defined outside the function (in another cell, or
    imported above it), and the note says so. (Not in `code_error` itself: lesson 3's gate runs
    in the kernel, where "the worker" would be wrong.)"""
    said = code_error(error, line, source)
    if error.startswith("NameError"):
        return f"{said} ({say('checks.code.own_source_only')})"
    return said


def worker_error(
    worker: WorkerReport, source: str, reader_file: str, planned: Iterable[int] = (0,)
) -> str | None:
    """The reader's error if a worker that ran their code died of it (the traceback's last line,
    at their line), or None if it ended as `planned` (its exit status: 0, or a planned kill)."""
    if worker.exit_code in planned and not worker.timed_out:
        return None
    if worker.timed_out:
        return say("checks.code.timed_out", role=worker.role)
    lines = worker.stderr.strip().splitlines() or [
        say("checks.code.exit_status", code=worker.exit_code)
    ]
    frames = re.findall(rf'File "{re.escape(reader_file)}", line (\d+)', worker.stderr)
    return worker_code_error(lines[-1], int(frames[-1]) if frames else None, source)


def lab_line_raised(worker: WorkerReport, reader_file: str) -> bool:
    """The worker died of a traceback with no frame of the reader's file: the lab's own line
    raised it, not theirs."""
    return "Traceback" in worker.stderr and f'File "{reader_file}"' not in worker.stderr


def check_worker(
    worker: WorkerReport,
    source: str,
    reader_file: str,
    run_dir: object,
    expects: str,
    planned: Iterable[int] = (0,),
) -> None:
    """Nothing if a worker that ran the reader's code ended as `planned`; else their error, at
    their line (ReaderCodeError), or, if the lab's own line raised, what the lab expects of
    their code (UnmetExpectation; `expects` is its catalogue key)."""
    error = worker_error(worker, source, reader_file, planned)
    if error is None:
        return
    if lab_line_raised(worker, reader_file):
        last = worker.stderr.strip().splitlines()[-1]
        said = say("checks.code.lab_expects", expects=say(expects), error=last)
        raise UnmetExpectation(said, str(run_dir))
    raise ReaderCodeError(error, str(run_dir))


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
        raise ReaderCodeError(say("checks.code.needs_a_cell", error=error)) from None
    names = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    if not names:
        raise ReaderCodeError(say("checks.code.needs_a_function"))
    return source, names[0]


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


def no_verdict(run: str, failure: str, run_dir: str | None) -> Verdict:
    """A real run failed by itself (a worker's own error, a timeout): no verdict, no value."""
    return Verdict("no verdict", say("checks.check.no_verdict", run=run, failure=failure), run_dir)


def also_in(run_dir: object, footer: object) -> str:
    """The note "(look in …)" for a run folder other than the one the verdict's footer names."""
    if not run_dir or str(run_dir) == str(footer):
        return ""
    return say("checks.also_in", folder=run_dir)


def case_name(key: object) -> object:
    """A case as the reader may write it: "Effect_First / Effect" is "effect_first/effect",
    "before create" is "before_create"."""
    if not isinstance(key, str):
        return key
    return re.sub(r"[\s-]+", "_", re.sub(r"\s*/\s*", "/", key.strip().lower()))


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
