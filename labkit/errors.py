"""The one kind of error a reader's bad input raises: it always names the valid choices."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["LabError", "check_choice"]


class LabError(ValueError):
    """Bad input to the lab (an unknown order, kill point, mode, or a folder that exists)."""


def check_choice(what: str, value: str, choices: Iterable[str]) -> str:
    """Return `value` if it is one of `choices`, else raise a LabError that lists them."""
    choices = list(choices)
    if value not in choices:
        raise LabError(f"unknown {what} {value!r}; choose one of: {', '.join(choices)}")
    return value
