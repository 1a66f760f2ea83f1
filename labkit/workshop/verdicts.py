"""What a check says: a Verdict (its status a code, its words from the catalogue when shown), and
the two errors a judge raises about the reader's code. Apart from the judging, so that every
lesson's judge and the notebook's display agree on one shape of answer."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from labkit.language import say
from labkit.language.failures import failure_text

__all__ = [
    "COLOURS",
    "ReaderCodeError",
    "Text",
    "UnmetExpectation",
    "Verdict",
    "also_in",
    "no_verdict",
]

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


def no_verdict(run: str, failure: dict | str, run_dir: str | None) -> Verdict:
    """A real run failed by itself (a worker's own error, a timeout): no verdict, no value."""
    return Verdict(
        "no verdict",
        say("checks.check.no_verdict", run=run, failure=failure_text(failure)),
        run_dir,
    )


def also_in(run_dir: object, footer: object) -> str:
    """The note "(look in …)" for a run folder other than the one the verdict's footer names."""
    if not run_dir or str(run_dir) == str(footer):
        return ""
    return say("checks.also_in", folder=run_dir)
