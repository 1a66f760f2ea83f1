"""The one kind of error a reader's bad input raises: one line that names what was given and
what is allowed. Every public entry checks its arguments with these before it starts anything
(a folder, a worker, the trial server), so a typo never leaves half a run behind."""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = [
    "LabError",
    "check_bool",
    "check_choice",
    "check_choices",
    "check_folder",
    "check_function",
    "check_int",
    "check_number",
]


class LabError(ValueError):
    """Bad input to the lab (an unknown order, kill point, mode, or a folder that exists)."""


def check_choice(what: str, value: str, choices: Iterable[str]) -> str:
    """Return `value` if it is one of `choices`, else raise a LabError that lists them."""
    choices = list(choices)
    if not isinstance(value, str) or value not in choices:
        raise LabError(f"unknown {what} {value!r}; choose one of: {', '.join(choices)}")
    return value


def check_choices(what: str, values: Iterable[str], choices: Iterable[str]) -> tuple[str, ...]:
    """A non-empty list of choices, each a `what`; a lone string is refused (it would go letter
    by letter: "exit" as kill modes would be 'e', 'x', 'i', 't')."""
    choices = tuple(choices)
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise LabError(f"{what}s must be a list of: {', '.join(choices)}; not {values!r}")
    picked = tuple(check_choice(what, value, choices) for value in values)
    if not picked:
        raise LabError(f"{what}s must name at least one of: {', '.join(choices)}")
    return picked


def check_int(what: str, value: object, low: int, high: int) -> int:
    """A whole number from `low` to `high`: an int (or numpy int), never a bool, float or str."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or not low <= value <= high
    ):
        raise LabError(f"{what} must be a whole number from {low} to {high}, not {value!r}")
    return int(value)


def check_number(what: str, value: object, above: float, at_most: float) -> float:
    """A finite real number with above < value <= at_most (no bool, str, NaN or infinity)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or not above < value <= at_most
    ):
        raise LabError(
            f"{what} must be a number above {above} and at most {at_most}, not {value!r}"
        )
    return float(value)


def check_bool(what: str, value: object) -> bool:
    """True or False itself: a string such as "no" would otherwise count as true."""
    if not isinstance(value, bool):
        raise LabError(f"{what} must be True or False, not {value!r}")
    return value


def check_folder(what: str, value: object) -> Path | None:
    """A folder path (str or Path) or None (also for ""): the caller's choice of where to write."""
    if value is None or value == "":
        return None
    if not isinstance(value, str | os.PathLike):
        raise LabError(f"{what} must be a folder path (a str or Path) or None, not {value!r}")
    return Path(value)


def check_function(what: str, value: object) -> Callable | None:
    """A function to call back, or None."""
    if value is not None and not callable(value):
        raise LabError(f"{what} must be a function or None, not {value!r}")
    return value
