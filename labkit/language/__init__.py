"""The reader's language: every sentence labkit shows a reader comes from one catalogue per
language, never from the code paths.

A view or a check asks `say("tables.no_rows")` or `say("text.outcome", name=..., meaning=...)`;
the words live in `labkit/language/en/*.toml` and `labkit/language/zh/*.toml`, a file per area
(the stem is the key's first part), so a translator edits words, never code. A test holds the two
catalogues to the same keys and the same `{fields}`.

A notebook chooses its language in its first cell, `lk.set_language("zh")`, and everything it
shows from then on (widgets, tables, verdicts, hints, the timeline's labels) follows. The
command line speaks English unless `LABKIT_LANGUAGE=zh` is set. Workers never import this: they
write traces and files, which have no language.
"""

from __future__ import annotations

import os
import tomllib
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path

from labkit.bench.errors import check_choice
from labkit.language.spacing import fill, joined

__all__ = [
    "LANGUAGES",
    "Messages",
    "catalogue",
    "display_width",
    "joined",
    "language",
    "padded",
    "say",
    "set_language",
]

LANGUAGES = ("en", "zh")  # the languages there is a catalogue for
FOLDER = Path(__file__).parent

# set but empty: as if unset, as LABKIT_POSTGRES_URL is read
_chosen = [os.environ.get("LABKIT_LANGUAGE") or "en"]


def set_language(code: str) -> None:
    """Show everything from now on in `code` ("en" or "zh"), for this kernel or process."""
    _chosen[0] = check_choice("language", code, LANGUAGES)


def language() -> str:
    """The language chosen now ("en" unless set_language or LABKIT_LANGUAGE said otherwise)."""
    return check_choice("language (LABKIT_LANGUAGE)", _chosen[0], LANGUAGES)


@cache
def catalogue(code: str) -> dict[str, str]:
    """Every message of one language, by key: "<file stem>.<name>" ("tables.no_rows")."""
    messages: dict[str, str] = {}
    for path in sorted((FOLDER / check_choice("language", code, LANGUAGES)).glob("*.toml")):
        with path.open("rb") as file:
            messages.update(flatten(tomllib.load(file), path.stem))
    return messages


def flatten(table: dict, prefix: str) -> dict[str, str]:
    """TOML tables as dotted keys: [outcome] duplicate = "..." in text.toml is
    "text.outcome.duplicate"."""
    flat: dict[str, str] = {}
    for name, value in table.items():
        key = f"{prefix}.{name}"
        flat.update(flatten(value, key) if isinstance(value, dict) else {key: value})
    return flat


def say(key: str, /, **fields: object) -> str:
    """The message `key` in the chosen language, with its `{fields}` filled in (a brace meant
    as a brace is written twice in the catalogue, as str.format wants), and a space where a
    field's Latin value meets Chinese (spacing.py)."""
    return fill(catalogue(language())[key], fields)


class Messages(Mapping[str, str]):
    """A module's table of codes and what each means, e.g. a study's outcomes: the codes are
    fixed, each meaning is `say("<prefix>.<code>")` when it is read, so a table made at import
    follows the language chosen later (`OUTCOMES["lost"]`, `OUTCOMES.items()`)."""

    def __init__(self, prefix: str, codes: Iterable[str]) -> None:
        self.prefix, self.codes = prefix, tuple(codes)

    def __getitem__(self, code: str) -> str:
        if code not in self.codes:
            raise KeyError(code)
        return say(f"{self.prefix}.{code}")

    def __iter__(self) -> Iterator[str]:
        return iter(self.codes)

    def __len__(self) -> int:
        return len(self.codes)


def display_width(text: str) -> int:
    """How many terminal columns `text` takes: a wide character (Chinese, full-width
    punctuation) takes two, as terminals and monospace <pre> blocks draw it."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def padded(text: str, width: int) -> str:
    """`text` and spaces to `width` columns (str.ljust counts a Chinese character as one)."""
    return text + " " * (width - display_width(text))
