"""What the Chinese edition's tests share: does a text shown in Chinese say it in Chinese, with
none of our English left in?

A view or a verdict shown with Chinese chosen must show Chinese and none of the English of the
catalogue files it speaks from: a sentence that never went into the catalogue, or one looked up
at import time (frozen in English), shows up here as an English piece of the shown text. The
`chinese` fixture that chooses the language is in tests/conftest.py.
"""

from __future__ import annotations

import html
import re
import string
from collections.abc import Iterable

from labkit.language import catalogue

__all__ = [
    "CJK",
    "assert_chinese",
    "assert_lesson_chinese",
    "assert_no_english",
    "assert_no_python",
    "english_pieces",
    "english_words",
    "shown_by",
]

CJK = re.compile(r"[\u3400-\u9fff]")  # a Chinese character
TAG = re.compile(r"<[^>]+>")
APART = re.compile(r"\n|\s{2,}")  # another line, another column: words a reader meets apart
# An English word: two letters or more ("w1", "a" say nothing of a language), not a function's
# name ("ms put()" is a unit and a call, as the Chinese writes them too).
WORD = re.compile(r"[A-Za-z]{2,}(?![A-Za-z(])")
EDGES = string.whitespace + ".,;:()"


def english_pieces(areas: Iterable[str]) -> set[str]:
    """The English of these catalogue files (their stems) as a reader meets it: each message's
    text between its {fields}, HTML tags read as spaces, cut where lines or columns part it;
    each piece of two English words or more. A piece the Chinese message of the same key quotes
    as it is (a library's error, code the reader types) is not our English: it is left out."""
    english, chinese = catalogue("en"), catalogue("zh")
    areas = set(areas)
    unknown = areas - {key.split(".")[0] for key in english}
    assert not unknown, f"no catalogue file {sorted(unknown)}"  # else nothing would be looked for
    pieces = set()
    for key, text in english.items():
        if key.split(".")[0] not in areas:
            continue
        for literal, *_ in string.Formatter().parse(text):
            for part in APART.split(TAG.sub(" ", literal)):
                piece = part.strip(EDGES)
                if len(WORD.findall(part)) >= 2 and piece not in chinese[key]:
                    pieces.add(piece)
    return pieces


def assert_chinese(shown: str, areas: Iterable[str]) -> None:
    """Chinese appears in `shown` (text, or HTML read as text), and no English piece of these
    catalogue files does."""
    text = html.unescape(shown)
    assert CJK.search(text), text[:300]
    left = sorted(piece for piece in english_pieces(areas) if piece in text)
    assert left == [], f"English left: {left}\nin: {text[:2000]}"


def english_words(prefixes: Iterable[str]) -> list[str]:
    """The short English of the catalogue keys under these prefixes ("explorer.outcome.",
    "unknown_outcome.name."): each message's text between its {fields}, where the Chinese
    says it otherwise; outcome words, process names, "COMMIT", too short for `english_pieces`."""
    english, chinese = catalogue("en"), catalogue("zh")
    words = set()
    for key, text in english.items():
        if key.startswith(tuple(prefixes)) and text != chinese[key]:
            for literal, *_ in string.Formatter().parse(text):
                word = literal.strip(EDGES + "-")
                if re.search("[A-Za-z]", word):
                    words.add(word)
    assert words, f"no English under {prefixes}"  # else nothing would be looked for
    return sorted(words)


def assert_no_english(
    shown: str, areas: Iterable[str], prefixes: Iterable[str], allowed: Iterable[str] = ()
) -> None:
    """Chinese, with no English sentence of these catalogue files and no English word of the
    keys under `prefixes`, in any case ("DUPLICATE" on a badge), as a word of its own ("commit"
    inside "after_commit" or "consumer.db" is a code, a file's name) unless `allowed` (words a
    file holds as data, quoted as it holds them)."""
    assert_chinese(shown, areas)
    text = html.unescape(shown)
    left = [
        w
        for w in english_words(prefixes)
        if w not in set(allowed)
        and re.search(rf"(?<![A-Za-z0-9_.]){re.escape(w)}(?![A-Za-z0-9_.])", text, re.IGNORECASE)
    ]
    assert left == [], f"English left: {left}\nin: {text[:3000]}"


# Python's own way of printing a value, where a reader's sentence should be: a dict, a list of
# tuples or rows, a Counter, None/True/False (issue 27, item 4)
PYTHON = re.compile(r"\{'|\[\(|\[\['|Counter\(|(?<![\w.`=(])(?:None|True|False)(?![\w`(])")


def assert_no_python(shown: str, allowed: Iterable[str] = ()) -> None:
    """No value in `shown` as Python prints it (PYTHON), but the pieces `allowed` (code the
    lesson quotes, a library's own words)."""
    text = html.unescape(shown)
    for piece in allowed:
        text = text.replace(piece, "")
    left = [m.group(0) for m in PYTHON.finditer(text)]
    assert left == [], f"Python left: {left}\nin: {text[:3000]}"


# The words a lesson's outputs must not show in English: outcome words and process names
LESSON_WORDS = (
    "commit_window.name.",
    "text.process.",
    "unknown_outcome.name.",
    "explorer.outcome.",
)
# A word of a code, a path or a call is no English word: "commit-window-x1", "my_graph.py:graph",
# "Command(resume=True)"
CODE_EDGE = r"[A-Za-z0-9_./:=(\-]"
WIDGET_TEXTS = ("value", "description", "placeholder", "tooltip")


def shown_by(notebook: dict) -> str:
    """What a reader sees of an executed notebook (nbformat's dict): its streams, its results
    (HTML read as text), each widget's value, description and options; not a traceback (Python's
    and the library's words), not a widget's repr (the widget is shown instead)."""
    shown = []
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            if output["output_type"] == "stream":
                shown.append("".join(output["text"]))
            elif output["output_type"] in ("execute_result", "display_data"):
                data = output["data"]
                if "application/vnd.jupyter.widget-view+json" not in data:
                    shown.append("".join(data.get("text/html") or data.get("text/plain") or ""))
    widgets = notebook["metadata"].get("widgets", {})
    state = widgets.get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    for model in state.values():
        fields = model.get("state", {})
        shown += [fields[k] for k in WIDGET_TEXTS if isinstance(fields.get(k), str)]
        shown += map(str, fields.get("_options_labels") or ())
    return html.unescape(TAG.sub(" ", "\n".join(shown)))


def assert_lesson_chinese(notebook: dict, allowed: Iterable[str] = ()) -> None:
    """An executed Chinese lesson shows Chinese, no English sentence of the catalogue (but the
    pieces `allowed`: a column's name, a file's data) and no outcome word or process name in
    English outside code (but the words `allowed`: what a file holds, what a library says)."""
    allowed = set(allowed)
    text = shown_by(notebook)
    assert CJK.search(text), text[:300]
    areas = {key.split(".")[0] for key in catalogue("en")} - {"cli"}
    left = sorted(p for p in english_pieces(areas) if p in text and p not in allowed)
    left += [
        w
        for w in english_words(LESSON_WORDS)
        if w not in allowed
        and re.search(rf"(?<!{CODE_EDGE}){re.escape(w)}(?!{CODE_EDGE})", text, re.IGNORECASE)
    ]
    assert left == [], f"English left: {left}"
