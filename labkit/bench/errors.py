"""The one kind of error a reader's bad input raises: one line that names what was given and
what is allowed. Every public entry checks its arguments with these before it starts anything
(a folder, a worker, the trial server), so a typo never leaves half a run behind.

RunFailed is the other one-line error: the run's own process could not go on (a full disk)."""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

__all__ = [
    "MAX_TIMEOUT",
    "LabError",
    "RunFailed",
    "check_bool",
    "check_choice",
    "check_choices",
    "check_distinct",
    "check_folder",
    "check_function",
    "check_instance",
    "check_int",
    "check_items",
    "check_number",
    "check_record",
    "described",
    "refusal",
    "worded",
]


MAX_TIMEOUT = 3600  # seconds: an hour is more than any worker needs, even paused for a class


class LabError(ValueError):
    """Bad input to the lab (an unknown order, kill point, mode, or a folder that exists).

    Its text is English; `code` and `fields` say the same as data (`code="choice"`, `what`,
    `value`, `choices`), so the command line can say it in the reader's language."""

    def __init__(self, message: str, code: str | None = None, **fields: object) -> None:
        super().__init__(message)
        self.code, self.fields = code, fields


def refusal(code: str, **fields: object) -> LabError:
    """A LabError said by its code: its English text is the catalogue's cli.error.<code> with
    `fields` (codes among them in words: `worded`), so the command line says the same in the
    reader's language. (The catalogue is loaded here, on a refusal, never at import: workers do
    not load it.)"""
    from labkit.language import catalogue

    english = catalogue("en")
    return LabError(english[f"cli.error.{code}"].format(**worded(fields, english)), code, **fields)


WORDED = {"what": "noun", "who": "who", "expected": "expected"}  # field: its catalogue table


def worded(fields: dict, messages: dict[str, str]) -> dict:
    """`fields` with the codes a reader sees said in `messages`' words: `what` ("write order")
    by cli.noun, `who` ("worker") by cli.who, `expected` ("outbox_results") by cli.expected; a
    value with no word there stays as given."""
    said = dict(fields)
    for field, table in WORDED.items():
        if field in said:
            code = str(said[field]).replace(" ", "_")
            said[field] = messages.get(f"cli.{table}.{code}", said[field])
    return said


class RunFailed(RuntimeError):
    """The parent could not go on with a run (a full disk, most often): no outcome exists.

    Its text is English; `code` and `fields` say the same as data ("run_failed": `failure`,
    `run_dir`), so a view or the command line can say it in the reader's language."""

    def __init__(self, message: str, code: str | None = None, **fields: object) -> None:
        super().__init__(message)
        self.code, self.fields = code, fields


class CodeFailed(RunFailed):
    """The reader's code failed in a run without a crash (a node, sync or async, a step): no
    outcome exists, and the input was no fault: the command line's status is 1, not 2."""


def check_choice(what: str, value: str, choices: Iterable[str], of: str = "") -> str:
    """Return `value` if it is one of `choices`, else raise a LabError that lists them (`of`:
    whose choices they are, "kill point" of "effect_first")."""
    choices = list(choices)
    if not isinstance(value, str) or value not in choices:
        named, listed = f"{what} for {of}" if of else what, ", ".join(choices)
        fields = {"what": what, "of": of, "value": value, "choices": listed}
        raise LabError(f"unknown {named} {value!r}; choose one of: {listed}", "choice", **fields)
    return value


def check_choices(what: str, values: Iterable[str], choices: Iterable[str]) -> tuple[str, ...]:
    """A non-empty list of choices, each a `what`; a lone string is refused (it would go letter
    by letter: "exit" as kill modes would be 'e', 'x', 'i', 't')."""
    choices = tuple(choices)
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise refusal("list", what=what, choices=", ".join(choices), value=values)
    picked = tuple(check_choice(what, value, choices) for value in values)
    if not picked:
        raise refusal("none_named", what=what, choices=", ".join(choices))
    return check_distinct(what, picked)


def check_distinct(
    what: str, values: Iterable[T], name: Callable[[T], object] = lambda value: value
) -> tuple[T, ...]:
    """`values` if no two have the same `name` (what a run of each is called: its folder's
    name): the second of two would run into the first one's folder and fail late, after the
    first had run, on a folder that exists."""
    values = tuple(values)
    seen: set[object] = set()
    for value in values:
        if name(value) in seen:
            raise refusal("twice", what=what, value=name(value))
        seen.add(name(value))
    return values


def check_int(what: str, value: object, low: int, high: int) -> int:
    """A whole number from `low` to `high`: an int (or numpy int), never a bool, float or str."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or not low <= value <= high
    ):
        fields = {"what": what, "low": low, "high": high, "value": value}
        message = f"{what} must be a whole number from {low} to {high}, not {value!r}"
        raise LabError(message, "whole_number", **fields)
    return int(value)


def check_number(what: str, value: object, above: float, at_most: float) -> float:
    """A finite real number with above < value <= at_most (no bool, str, NaN or infinity)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or not above < value <= at_most
    ):
        fields = {"what": what, "above": above, "at_most": at_most, "value": value}
        message = f"{what} must be a number above {above} and at most {at_most}, not {value!r}"
        raise LabError(message, "number", **fields)
    return float(value)


def check_bool(what: str, value: object) -> bool:
    """True or False itself: a string such as "no" would otherwise count as true."""
    if not isinstance(value, bool):
        raise refusal("bool", what=what, value=described(value))
    return value


def check_folder(what: str, value: object) -> Path | None:
    """A folder path (str or Path) or None: the caller's choice of where to write. "" is
    refused rather than read as None: an empty --out is more likely a slip than a choice."""
    if value is None:
        return None
    if not isinstance(value, str | os.PathLike) or not isinstance(os.fspath(value), str):
        raise refusal("folder_type", what=what, value=described(value))
    if os.fspath(value) == "":
        raise refusal("folder_empty", what=what)
    if "\0" in os.fspath(value):
        raise refusal("folder_nul", what=what, value=repr(value))
    return Path(value)


def check_function(what: str, value: object) -> Callable | None:
    """A function to call back, or None."""
    if value is not None and not callable(value):
        raise refusal("function", what=what, value=described(value))
    return value


def described(value: object) -> str:
    """A wrong value in a few words: short ones as written, others by their type."""
    text = repr(value)
    return text if len(text) <= 40 else f"a {type(value).__name__}"


def check_instance(what: str, value: T, kind: type | tuple[type, ...], expected: str) -> T:
    """`value` if it is a `kind`, else one line: "result must be <expected>, not None"
    (`expected`: a code of the catalogue's cli.expected, "outbox_result")."""
    if not isinstance(value, kind):
        raise refusal("expected", what=what, expected=expected, value=described(value))
    return value


def check_items(what: str, values: object, kind: type, expected: str) -> list:
    """A list (or tuple) whose every item is a `kind`, such as the results of a sweep
    (`expected`: a cli.expected code, "outbox_results")."""
    if not isinstance(values, list | tuple) or not all(isinstance(v, kind) for v in values):
        raise refusal("expected", what=what, expected=expected, value=described(values))
    return list(values)


def check_record(what: str, value: object, keys: Iterable[str], expected: str) -> dict:
    """A dict that has every one of `keys`, such as the figures a run returns as a dict
    (`expected`: a cli.expected code, "interrupt_result")."""
    if not isinstance(value, dict) or not set(keys) <= value.keys():
        raise refusal("expected", what=what, expected=expected, value=described(value))
    return value
