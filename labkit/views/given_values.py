"""A value a graph gave (an interrupt's, kept in the run's data as Python's repr of it), said in
the reader's language: a string in the edition's quotes ('report-17', “report-17”), any other
value as Python wrote it (it is the reader's code's, as they would read it)."""

from __future__ import annotations

import ast

from labkit.language import say

__all__ = ["given_value"]


def given_value(written: str) -> str:
    """`written` (a value's repr) as the reader reads it: a string quoted as the language
    quotes, anything else as written."""
    try:
        value = ast.literal_eval(written)
    except (ValueError, SyntaxError):  # no literal (an object's repr): as written
        return written
    return say("common.quoted", value=value) if isinstance(value, str) else written
