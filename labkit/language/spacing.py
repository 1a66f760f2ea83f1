"""Chinese beside Latin letters and digits: one half-width space between them, none beside
full-width punctuation (the way the zh lessons and study 004 write it: "2 条回执", "在 `effect`
之后", "58%").

The catalogue's own words are written so (tests/test_spacing_zh.py checks them). What a
{field} will hold is known only when it is filled: "{count}条回执" gets a number, "在{point}强杀"
a kill point's Chinese name or its code. So a field stands against Chinese with no space in the
catalogue, and `fill` puts one there when the value begins or ends with a Latin letter, a digit
or a code-like character; a Chinese value stays tight ("在第 1 次提交之后强杀"). `joined` does
the same for values joined by a Chinese word ("，然后是").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from string import Formatter

__all__ = ["CJK", "INLINE", "apart", "fill", "joined"]

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")  # a Chinese character
LATIN = re.compile(r"[A-Za-z0-9]")
# what a value may begin or end with that reads as Latin text beside Chinese: a quoted repr,
# a path, an issue number, a code span, a tuple, JSON, an option (--sweep), HTML-escaped text,
# a dunder name (__start__)
OPENS, CLOSES = "'\"`/#([{-+~$.&_", "'\"`/)]}%;_"  # &quot; ends in ;
INLINE = r"</?(?:b|i|em|strong|code)>"  # a tag that leaves its text in the line
TAGS_AT_END, TAGS_AT_START = re.compile(f"(?:{INLINE})*$"), re.compile(f"^(?:{INLINE})*")
TAIL = 100
_formatter = Formatter()


@cache
def parsed(template: str) -> tuple[tuple[str, str | None, str, str | None], ...]:
    """The template's pieces, as str.format reads them: (literal, field, spec, conversion)."""
    return tuple(_formatter.parse(template))


def fill(template: str, fields: dict[str, object]) -> str:
    """`template.format(**fields)`, with one space where a field's value meets Chinese with a
    Latin letter or digit (or a quote, a path, a code span) on its side; inline tags (<b>,
    <code>) between them are looked through, and the space goes beside the Chinese."""
    pieces: list[tuple[str, bool]] = []  # (text, is a field's value)
    for literal, name, spec, conversion in parsed(template):
        pieces.append((literal, False))
        if name is not None:
            value, _ = _formatter.get_field(name, (), fields)
            spec = _formatter.vformat(spec, (), fields) if "{" in spec else spec
            value = _formatter.convert_field(value, conversion)
            pieces.append((_formatter.format_field(value, spec), True))
    return spaced(pieces)


def joined(separator: str, values: Iterable[str]) -> str:
    """`separator.join(values)` with the same spacing: "ValueError，然后是 str" where the
    separator's Chinese meets a Latin value."""
    pieces: list[tuple[str, bool]] = []
    for n, value in enumerate(values):
        pieces += [(separator, False), (value, True)] if n else [(value, True)]
    return spaced(pieces)


def spaced(pieces: list[tuple[str, bool]]) -> str:
    """The pieces (text, is a field's value) as one text, a space where a field's Latin edge
    meets Chinese."""
    pieces = [piece for piece in pieces if piece[0]]
    text = pieces[0][0] if pieces else ""
    for (_, before_is_field), (after, after_is_field) in zip(pieces, pieces[1:], strict=False):
        tail = text[-TAIL:]  # tags at its end are short: the whole text need not be read again
        left_end = len(text) - len(tail) + TAGS_AT_END.search(tail).start()
        right_start = TAGS_AT_START.match(after).end()
        left, right = text[left_end - 1 : left_end], after[right_start : right_start + 1]
        if after_is_field and CJK.match(left) and latin_edge(right, OPENS):
            text = f"{text[:left_end]} {text[left_end:]}"
        elif before_is_field and CJK.match(right) and latin_edge(left, CLOSES):
            after = f"{after[:right_start]} {after[right_start:]}"
        text += after
    return text


def latin_edge(char: str, also: str) -> bool:
    """Does a value's first (or last) character read as Latin beside Chinese?"""
    return bool(char) and (bool(LATIN.match(char)) or char in also)


FULL_WIDTH = (
    "（），。；：、！？"  # Chinese punctuation: it carries its own room, no space beside it
)


def apart(left: str, right: str) -> str:
    """Two pieces of a line a view puts side by side, "<b>Before recovery</b> (done=0, ...)":
    one space between them, none where either side is full-width punctuation, as Chinese sets
    "<b>恢复前</b>（done=0，...）". Inline tags at the join are looked through."""
    tail = left[-TAIL:]
    last = tail[: TAGS_AT_END.search(tail).start()][-1:]
    first = right[TAGS_AT_START.match(right).end() :][:1]
    tight = (last and last in FULL_WIDTH) or (first and first in FULL_WIDTH)
    return f"{left}{right}" if tight else f"{left} {right}"
