"""The Chinese catalogue quotes as the edition quotes (issue 27): a name or a value the reader
gave stands in “…” (“claimed”, “nope”), never in Python's quotes ('claimed'), neither by the
template (`{point!r}`, `'{point}'`) nor by the code that fills it (`point=repr(name)`). And it
says one unit one way: 毫秒, as the lessons' prose does, in sentences, help, axes and column
headers alike ("250 毫秒", "中位数（毫秒）"), never "ms" beside it; and 秒, never "s"."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

from labkit.language import catalogue, say, set_language

PYTHON_QUOTED = re.compile(r"'\{[^{}]*\}'")
# "ms" as a unit word: not inside a name (pause_ms, --pause-ms, {ms}) or a code span
MS = re.compile(r"(?<![\w{\-.`])ms(?![\w}`])")
# "s" as a unit of seconds: after a number or a {field} ("0.3 s", "{seconds:.1f} s")
SECONDS = re.compile(r"(?<=[\d}])\s?s(?![\w}`])")
ZH = Path(__file__).resolve().parents[1] / "notebooks" / "zh"


def test_no_chinese_message_quotes_a_field_as_python_does():
    said = {}
    for key, text in catalogue("zh").items():
        fields = list(string.Formatter().parse(text))
        if any(conversion == "r" for *_, conversion in fields) or PYTHON_QUOTED.search(text):
            said[key] = text
    assert said == {}


def test_a_point_and_a_given_value_are_quoted_in_chinese_quotes(tmp_path):
    from labkit.views.tables import refusal_text

    set_language("zh")
    try:
        shown = [
            say("cli.step.paused", point="start"),
            say("cli.error.choice", what="写入顺序", value="nope", choices="a, b"),
            refusal_text("op-1", {"code": "payload_conflict", "held": "v1", "sent": "v2"}),
        ]
    finally:
        set_language("en")
    assert shown[0].startswith("\n=== 停在“start”") and shown[1].startswith("未知的写入顺序“nope”")
    assert shown[2] == "键“op-1”已保存“v1”，不是“v2”"
    said = refusal_text("op-1", {"code": "payload_conflict", "held": "v1", "sent": "v2"})
    assert said == "key 'op-1' already holds 'v1', not 'v2'"  # English, as it was


def said_with(unit: re.Pattern) -> dict[str, str]:
    """Where the zh catalogue or a zh lesson's prose (code spans left out) writes `unit`."""
    said = {key: text for key, text in catalogue("zh").items() if unit.search(text)}
    for path in sorted(ZH.glob("*.ipynb")):
        for n, cell in enumerate(json.loads(path.read_text())["cells"]):
            prose = re.sub(r"`[^`]*`", "", "".join(cell["source"]))
            if cell["cell_type"] == "markdown" and unit.search(prose):
                said[f"{path.name} cell {n}"] = prose
    return said


def test_the_chinese_edition_says_milliseconds_as_haomiao():
    assert said_with(MS) == {}


def test_the_chinese_edition_says_seconds_as_miao():
    """Seconds are 秒 as milliseconds are 毫秒 ("7.8 秒", "超时 0.3 秒"), never "s" beside them."""
    assert said_with(SECONDS) == {}
