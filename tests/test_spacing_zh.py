"""Chinese beside Latin letters and digits, one way everywhere (issue 27, item 7): one
half-width space between a Chinese character and a Latin letter, a digit or a code span, none
beside full-width punctuation, and "58%" with no space, as the zh lessons and study 004 write it.
A catalogue {field} stands against Chinese with no space: `say` puts one there when its value
is Latin (labkit/language/spacing.py). Quoted words (“...”, 「...」) are left as their source
wrote them; code (fenced, in backticks, a notebook's code) is not read, only its comments."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from labkit.language import catalogue, say, set_language
from labkit.language.spacing import CJK, INLINE

ROOT = Path(__file__).resolve().parent.parent
ZH = ROOT / "notebooks" / "zh"
HAN = CJK.pattern
LATIN = "[A-Za-z0-9]"
FENCED = re.compile(r"```.*?```", re.DOTALL)
QUOTED = re.compile(r"“[^”]*”|「[^」]*」")
CODE_SPAN = re.compile(r"`[^`\n]+`")
FIELD = r"(?<!\{)\{[^{}]*\}(?!\})"  # a str.format field, not a {{ brace }}
TIGHT = re.compile(f"{HAN}{LATIN}|{LATIN}{HAN}")
# a half-width quote or bracket is Latin text's: "保存 'pending'", "put() 耗时", "先把 (id) 记下"
QUOTE = re.compile(f"{HAN}['\"]{LATIN}|{LATIN}['\"]{HAN}")
BRACKET = re.compile(f"{HAN}[(\\[]|[)\\]]{HAN}")
# no space beside full-width punctuation ("<b>恢复前</b>（done=0）"), but a table's pipe
FULL_WIDTH_SPACED = re.compile(r"[^\s|\0] [（），。；：、！？]|[（，。；：、！？] [^\s|\0]")
LINK = re.compile(r"\[([^\]\n]*)\]\([^)\s]*\)")  # a markdown link: its brackets are syntax
PERCENT = re.compile(r"\d %")
SPACED_FIELD = re.compile(f"{HAN} {FIELD}|{FIELD} {HAN}")
# the studies' own names for their figures, as a reader of the study finds them
STUDY_NAMES = ("图1", "图2")


def faults(text: str, *, fields: bool = False) -> list[str]:
    """Each place in `text` that breaks the rule, a few characters either side."""
    found = []
    text = re.sub(INLINE, "", text)  # <b>, <code>: their text stays in the line
    if fields:
        found += [m.group() for m in SPACED_FIELD.finditer(text)]
        text = re.sub(FIELD, "\0", text)  # a field's own spacing is `say`'s
    for name in STUDY_NAMES:
        text = text.replace(name, "\0")
    for span in CODE_SPAN.finditer(text):
        beside = text[max(span.start() - 1, 0) : span.start()] + text[span.end() : span.end() + 1]
        if CJK.search(beside):
            found.append(text[max(span.start() - 3, 0) : span.end() + 3])
    text = CODE_SPAN.sub("\0", text)
    text = LINK.sub("\0\\1\0", text)
    for rule in (TIGHT, PERCENT, QUOTE, BRACKET, FULL_WIDTH_SPACED):
        found += [text[max(m.start() - 6, 0) : m.end() + 6] for m in rule.finditer(text)]
    return found


def markdown_texts() -> dict[str, str]:
    """The zh lessons' markdown and code comments, the zh documents, README's Chinese part;
    fenced code and quotations left out."""
    texts = {}
    for path in sorted(ZH.glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] == "code":
                source = "\n".join(line.partition("# ")[2] for line in source.splitlines())
            texts[f"{path.name} cell {cell['id']}"] = source
    for path in sorted(ZH.glob("*.md")):
        texts[path.name] = path.read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## 中文版")
    texts["README.md 中文版"] = readme[start : readme.index("\n## ", start)]
    return {where: QUOTED.sub("\0", FENCED.sub("\0", text)) for where, text in texts.items()}


def test_the_rule_finds_each_kind_of_fault():
    # proves the checks below can fail: each bad string is caught, its good twin passes
    assert faults("有2条回执") and faults("有 2条回执") and faults("写入effect.db")
    assert faults("在`effect`之后") and faults("占 58 %")
    assert faults("在 {point} 强杀", fields=True) and faults("{count} 条回执", fields=True)
    assert faults("正在<b>commit</b>强杀") and faults("在 <b>{point}</b> 强杀", fields=True)
    assert faults("保存'pending'") and faults("put()耗时") and faults("先把(id) 记下")
    assert faults("<b>恢复前</b> （done=0）") and faults("恢复前 ：") and faults("（ 见")
    assert not faults("有 2 条回执，写入 effect.db，在 `effect` 之后，占 58%")
    assert not faults("保存 'pending'，put() 耗时，先把 (id) 记下，<b>恢复前</b>（done=0）")
    assert not faults("见[讲师指南](GUIDE.md)里 | （认领之后） |")
    assert not faults("在{point}强杀，{count}条回执（{what}）", fields=True)


def test_every_zh_catalogue_string_is_spaced_one_way():
    found = [
        f"{key}: {fault!r}"
        for key, text in catalogue("zh").items()
        for fault in faults(text, fields=True)
    ]
    assert found == [], "\n".join(found)


def test_the_zh_markdown_is_spaced_one_way():
    found = [f"{where}: {f!r}" for where, text in markdown_texts().items() for f in faults(text)]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    ("key", "fields", "shown"),
    [
        ("commit_window.receipts_many", {"count": 2}, "2 条回执"),
        (
            "cli.error.whole_number",
            {"what": "试验次数", "low": 1, "high": 500, "value": 0},
            "试验次数必须是 1 到 500 之间的整数，而不是 0",
        ),
        (
            "cli.error.choice",
            {"what": "写入顺序", "value": "nope", "choices": "a, b"},
            "未知的写入顺序“nope”；请从中选一个：a, b",
        ),
        ("explorer.detail.node_writes", {"name": "__start__"}, "节点 __start__ 的写入"),
    ],
)
def test_say_spaces_a_latin_value_and_not_a_chinese_one(key, fields, shown):
    set_language("zh")
    try:
        assert say(key, **fields) == shown
    finally:
        set_language("en")


def test_a_views_own_space_is_left_out_beside_full_width_punctuation():
    from types import SimpleNamespace

    from labkit.language.spacing import apart
    from labkit.views.tables import stage_html

    held = SimpleNamespace(done=0, receipts=1)
    assert stage_html("before_recovery", held) == (
        "<p><b>Before recovery</b> (done=0, receipts=1)</p>"
    )
    set_language("zh")
    try:
        shown = stage_html("before_recovery", held)
    finally:
        set_language("en")
    assert shown == "<p><b>恢复前</b>（done=0，receipts=1）</p>" and not faults(shown)
    assert (
        apart("<b>之后</b>", "a") == "<b>之后</b> a" and apart("a，", "<i>b</i>") == "a，<i>b</i>"
    )
