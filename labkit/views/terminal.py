"""What a terminal or a projector shows fits 100 columns: a table's columns, and every line.

A table of a dozen columns (study 004's trials, the write orders) would run past a projector's
terminal, which then wraps each line where it likes and the columns no longer line up. Here a
table wider than `WIDTH` wraps inside its cells instead: the widest column gives way first, its
header before its values, at a space or between two Chinese characters, and a row takes as many
lines as its tallest cell. A long sentence (a library's error quoted whole, a legend) wraps at
its words, indented under itself; a word is never broken there, so a long path stays whole. A
table or a line that fits is shown as it always was.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from labkit.language import display_width, padded

__all__ = ["SQL_NULL", "WIDTH", "fit", "format_grid", "sql_value", "wrap"]

WIDTH = 100  # a terminal's columns: no line of a table goes past them
GAP = "  "  # between two columns
NARROWEST = 4  # a column narrower than this says nothing: its words break instead
PATH = re.compile(r"(?<![\w.])/[^\s/]+/")  # an absolute path: "/tmp/labkit-runs-0/..."
# Where a line may break: before a word (with the spaces before it), or at a wide character.
PIECES = re.compile(r" *[^ \u1100-\uffff]+| *[\u1100-\uffff]| +")
SQL_NULL = "NULL"  # a cell with no value, as SQL names it (Python would print None)


def sql_value(value: object) -> str:
    """A cell's value as a reader of tables writes it: NULL for no value."""
    return SQL_NULL if value is None else str(value)


def format_grid(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Left-aligned columns, wide enough for their longest cell (by display width, so that
    Chinese cells line up too), wrapped within their cells when the table would be wider than
    WIDTH."""
    cells = [[str(c) for c in header]] + [[sql_value(c) for c in row] for row in rows]
    widths = [max(display_width(row[i]) for row in cells) for i in range(len(header))]
    room = WIDTH - len(GAP) * (len(header) - 1)
    if sum(widths) > room:
        widths = fitted(widths, cells, room)
    lines = []
    for n, row in enumerate(cells):
        lines += row_lines(row, widths)
        if n == 0:
            lines.append(GAP.join("-" * w for w in widths))
    return "\n".join(lines)


def row_lines(row: Sequence[str], widths: Sequence[int]) -> list[str]:
    """One row as lines: each cell wrapped to its width, the row as tall as its tallest cell."""
    cells = [wrapped(cell, width) for cell, width in zip(row, widths, strict=True)]
    tall = max(len(cell) for cell in cells)
    return [
        GAP.join(
            padded(cell[k] if k < len(cell) else "", width)
            for cell, width in zip(cells, widths, strict=True)
        ).rstrip()
        for k in range(tall)
    ]


def fitted(widths: Sequence[int], cells: Sequence[Sequence[str]], room: int) -> list[int]:
    """Column widths that add up to at most `room`: one column at a time gives up one column
    (the one that costs least, see `cost`), first down to its widest value (its header wraps,
    at its words), then down to its longest word (values wrap too), and only then do words
    break (down to NARROWEST)."""
    widths = list(widths)
    columns = range(len(widths))
    header, body = cells[0], cells[1:]
    words = [max(longest_word(row[i]) for row in cells) for i in columns]
    values = [
        max([longest_word(header[i])] + [display_width(row[i]) for row in body]) for i in columns
    ]
    for floor in (values, words, [NARROWEST] * len(widths)):
        while sum(widths) > room:
            giving = [i for i in columns if widths[i] > floor[i]]
            if not giving:
                break
            widths[min(giving, key=lambda i: cost(cells, widths, i))] -= 1
    return widths


def cost(cells: Sequence[Sequence[str]], widths: list[int], i: int) -> tuple[int, int, int]:
    """What narrowing column `i` by one costs: the lines the table grows by, then the lines its
    own cells grow by (a cell already wrapped wraps again more cheaply than a short one is cut
    in two), then its width (the widest gives first)."""
    narrower = [*widths[:i], widths[i] - 1, *widths[i + 1 :]]
    grown = sum(
        len(wrapped(row[i], widths[i] - 1)) - len(wrapped(row[i], widths[i])) for row in cells
    )
    return height(cells, narrower) - height(cells, widths), grown, -widths[i]


def height(cells: Sequence[Sequence[str]], widths: Sequence[int]) -> int:
    """How many lines the table's rows take at these widths."""
    return sum(
        max(len(wrapped(cell, width)) for cell, width in zip(row, widths, strict=True))
        for row in cells
    )


@functools.lru_cache(maxsize=4096)
def wrapped(text: str, width: int) -> tuple[str, ...]:
    """`wrap`, remembered: fitting a table asks the same cells at the same widths again."""
    return tuple(wrap(text, width))


def longest_word(text: str) -> int:
    """The display width of the widest piece `wrap` will not break."""
    return max((display_width(p.strip(" ")) for p in PIECES.findall(text)), default=0)


def fit(text: str) -> str:
    """Every line of `text` in WIDTH columns: a longer one wraps at its words (or between
    Chinese characters), its next lines indented two more than it. A line that names a folder
    by its path, or holds a word too long to fit, is left whole: the path stays on its line."""
    lines = []
    for line in text.split("\n"):
        indent = len(line) - len(line.lstrip(" "))
        room = WIDTH - indent - 2
        if display_width(line) <= WIDTH or PATH.search(line) or longest_word(line) > room:
            lines.append(line)
            continue
        first, *rest = wrap(line[indent:], room, break_words=False)
        lines += [" " * indent + first, *(" " * (indent + 2) + more for more in rest)]
    return "\n".join(lines)


def wrap(text: str, width: int, break_words: bool = True) -> list[str]:
    """`text` as lines of at most `width` columns, broken before a word or at a wide character;
    a word wider than `width` is broken where it reaches it (or left whole: `break_words`)."""
    if display_width(text) <= width:
        return [text]
    lines = [""]
    for piece in PIECES.findall(text):
        if display_width(lines[-1] + piece) <= width:
            lines[-1] += piece
            continue
        piece = piece.lstrip(" ")  # a new line starts at the word, not at the space before it
        while break_words and display_width(piece) > width:
            fits = (n for n in range(len(piece), 0, -1) if display_width(piece[:n]) <= width)
            cut = next(fits, 1)
            lines.append(piece[:cut])
            piece = piece[cut:]
        lines.append(piece)
    return [line.rstrip(" ") for line in lines if line.strip(" ")] or [""]
