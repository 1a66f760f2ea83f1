"""How a reader's answer is read: what counts as still open (the starter's placeholder), a word
or a count in its natural form, a case's name as the reader may write it. Kept apart from the
judging so that "2 tickets" and " Lost." are read one way by every lesson."""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable
from typing import NamedTuple

from labkit.language import say

__all__ = [
    "OPEN",
    "WHOLE_NUMBER",
    "Form",
    "case_name",
    "is_open",
    "lone",
    "one_of",
    "read_whole_number",
    "word",
]

OPEN = ("???", None, ...)  # what a starter holds where an answer goes


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


def written_count(value: object) -> tuple[int, str] | None:
    """A count written as text and the unit after it, if any, in any script: "2" is (2, ""),
    "2.0 tickets" (2, "tickets"), "2 张" or "2张" (2, "张"); "two" or "2.5" is None."""
    text = re.fullmatch(r"(\d+)(?:\.0*)? *([^\W\d_]*)", word(lone(value)) or "")
    return (int(text[1]), text[2]) if text else None


def read_whole_number(value: object) -> int | None:
    """A count: 2, 2.0, "2", "2.0", "2 tickets" or "2 张" is 2; "two", 2.5, True or -1 is
    not one."""
    value = lone(value)
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Real) and float(value).is_integer():
        return int(value) if value >= 0 else None
    counted = written_count(value)
    return counted[0] if counted else None


WHOLE_NUMBER = Form("checks.form.whole_number", read_whole_number)


def case_name(key: object) -> object:
    """A case as the reader may write it: "Effect_First / Effect" is "effect_first/effect",
    "before create" is "before_create"."""
    if not isinstance(key, str):
        return key
    return re.sub(r"[\s-]+", "_", re.sub(r"\s*/\s*", "/", key.strip().lower()))
