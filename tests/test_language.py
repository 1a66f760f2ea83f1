"""The Chinese edition: two catalogues with the same keys, notebooks with the same code, figures
that draw Chinese, and a language switch that refuses what it does not know."""

from __future__ import annotations

import ast
import io
import json
import os
import re
import string
import subprocess
import sys
import tokenize
import warnings
from pathlib import Path

import pytest

import labkit as lk
from labkit.bench.errors import LabError
from labkit.language import LANGUAGES, catalogue, language, say

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
ENGLISH = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
CJK = re.compile(r"[\u3400-\u9fff]")
SWITCH = re.compile(r'lk\.set_language\("(en|zh)"\)')


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_both_catalogues_have_the_same_files_keys_and_fields():
    files = {
        code: sorted(p.name for p in (ROOT / "labkit/language" / code).glob("*.toml"))
        for code in LANGUAGES
    }
    assert files["zh"] == files["en"]
    english, chinese = catalogue("en"), catalogue("zh")
    assert sorted(chinese) == sorted(english)
    assert {k: fields(v) for k, v in chinese.items()} == {k: fields(v) for k, v in english.items()}


def test_every_key_is_a_code_not_a_sentence():
    """A key is what code passes (`retries.ended.terminated_by_sigterm`), never the English it
    once printed ("terminated by SIGTERM"): such a key ties the code to a wording."""
    sentences = [key for key in catalogue("en") if not re.fullmatch(r"[\w.+-]+", key)]
    assert sentences == []


def test_every_chinese_message_is_chinese_where_its_english_has_words():
    english, chinese = catalogue("en"), catalogue("zh")
    untranslated = [
        key
        for key, text in english.items()
        if chinese[key] == text and re.search(r"[A-Za-z]{3,} [a-z]{3,}", text)
    ]
    assert untranslated == []


def test_say_follows_the_chosen_language(chinese):
    assert say("common.run_folder") == "运行目录"
    lk.set_language("en")
    assert say("common.run_folder") == "run folder"


def test_an_unknown_language_is_one_line_naming_the_choices():
    with pytest.raises(LabError, match=r"^unknown language 'fr'; choose one of: en, zh$"):
        lk.set_language("fr")
    assert language() == "en"


def test_labkit_language_sets_the_command_lines_language_and_a_bad_one_is_status_2(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path), "LABKIT_LANGUAGE": "fr"}
    done = subprocess.run(
        [sys.executable, "-m", "labkit", "run", "effect_first", "--kill-at", "effect"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "labkit: error: unknown language (LABKIT_LANGUAGE) 'fr'; choose one of: en, zh"
    ]


def test_labkit_language_set_but_empty_is_english_as_if_unset(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path), "LABKIT_LANGUAGE": ""}
    done = subprocess.run(
        [sys.executable, "-m", "labkit", "orders"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert "effect_first" in done.stdout


def test_no_chinese_in_labkits_code_paths():
    """Chinese words live in the catalogue; a Chinese string in a module (other than a
    docstring, which talks about them) is one that escaped it."""
    found = []
    for path in (ROOT / "labkit").rglob("*.py"):
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        found += [
            f"{path.relative_to(ROOT)}:{node.lineno}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and CJK.search(node.value)
            and id(node) not in docstrings
        ]
    assert found == []


def test_a_figure_draws_chinese_with_no_missing_glyph_and_says_nothing(chinese, caplog):
    from labkit.views.figures import figure_png, new_figure

    figure = new_figure((4, 1))
    figure.subplots().set_title("提交窗口 · 检查点 · 回执 · 幂等键", fontweight="bold")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns "Glyph ... missing from font(s)"
        assert figure_png(figure).startswith(b"\x89PNG")
    assert [r.getMessage() for r in caplog.records if "findfont" in r.getMessage()] == []


def code_tokens(source: str) -> list[str]:
    """A cell's code as tokens, comments and the language switch's argument left out."""
    source = SWITCH.sub('lk.set_language("?")', source)
    lines = "\n".join(ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!")))
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    return [
        t.string
        for t in tokenize.generate_tokens(io.StringIO(lines).readline)
        if t.type not in skip
    ]


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


@pytest.mark.parametrize("english", ENGLISH, ids=lambda p: p.name)
def test_each_lesson_has_a_chinese_twin_with_the_same_code(english):
    twin = NOTEBOOKS / "zh" / english.name
    assert twin.exists(), f"no Chinese edition of {english.name}"
    code = {path: [c for c in cells(path) if c["cell_type"] == "code"] for path in (english, twin)}
    assert [code_tokens("".join(c["source"])) for c in code[twin]] == [
        code_tokens("".join(c["source"])) for c in code[english]
    ]
    switches = [SWITCH.findall("".join(c["source"])) for c in code[twin]]
    assert switches[0] == ["zh"], "the first code cell chooses Chinese"
    assert sum(switches, []) == ["zh"]


@pytest.mark.parametrize("english", ENGLISH, ids=lambda p: p.name)
def test_each_chinese_lesson_is_written_in_chinese(english):
    """Every markdown cell that says something in words says it in Chinese."""
    english_only = [
        "".join(c["source"])[:60]
        for c in cells(NOTEBOOKS / "zh" / english.name)
        if c["cell_type"] == "markdown"
        and re.search(r"[A-Za-z]{3,} [a-z]{3,} [a-z]{3,}", "".join(c["source"]))
        and not CJK.search("".join(c["source"]))
    ]
    assert english_only == []


@pytest.mark.parametrize("name", ["INSTRUCTOR_GUIDE.md", "SOURCE_STUDIES.md"])
def test_the_guides_have_a_chinese_edition(name):
    assert CJK.search((NOTEBOOKS / "zh" / name).read_text())


CHINESE_PAGES = sorted((NOTEBOOKS / "zh").glob("*.ipynb")) + sorted((NOTEBOOKS / "zh").glob("*.md"))


@pytest.mark.parametrize("path", CHINESE_PAGES, ids=lambda p: p.name)
def test_every_bold_in_the_chinese_edition_renders(path):
    """CommonMark ends `**` only where punctuation does not stand right before a Chinese
    character: `**预测：**两个` shows its stars. No stars may be left once rendered."""
    import mistune

    render = mistune.create_markdown(plugins=["table"])
    texts = (
        ["".join(c["source"]) for c in cells(path) if c["cell_type"] == "markdown"]
        if path.suffix == ".ipynb"
        else [path.read_text()]
    )
    left = [
        found
        for text in texts
        for found in re.findall(
            r".{0,20}\*\*.{0,20}",
            re.sub(r"<code>.*?</code>|<pre>.*?</pre>", "", render(text), flags=re.S),
        )
    ]
    assert left == []
