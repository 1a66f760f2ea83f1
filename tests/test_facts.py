"""A notebook cell's own line of numbers speaks the reader's language, labels and known words."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from labkit.bench.errors import LabError
from labkit.language import catalogue
from labkit.views.facts import facts_line, progress_lines

ROOT = Path(__file__).resolve().parents[1]


def test_labels_in_order_and_values_as_python_prints_them():
    line = facts_line(first_worker_exit=91, outcome="lost", same_files_as_exit_91=True)
    assert line == "first worker exit: 91 | outcome: lost | same files as os._exit(91): True"


def test_in_chinese_the_labels_and_known_words_follow(chinese):
    line = facts_line(first_worker_exit=-9, same_files_as_exit_91=False)
    assert line == "第一个 worker 的退出码：-9 ｜ 文件与 os._exit(91) 时相同：否"


def test_a_progress_line_counts_steps_or_trials_in_the_readers_words(capsys, chinese):
    progress_lines(counting="steps")(2, 3)
    progress_lines()(4, 4)
    assert capsys.readouterr().out.splitlines() == ["已完成的步骤：2/3", "已完成的试验：4/4"]
    with pytest.raises(LabError, match="unknown counting 'runs'; choose one of: trials, steps"):
        progress_lines(counting="runs")


def test_a_label_the_catalogue_lacks_is_a_key_error_naming_it():
    with pytest.raises(KeyError, match="facts.label.no_such_label"):
        facts_line(no_such_label=1)


def test_an_outcome_code_a_cell_prints_is_said_as_the_lessons_name_it(chinese):
    line = facts_line(consumer="plain", deliveries=2, outcome="duplicate", found_next=["review"])
    assert line == "消费者：plain ｜ 投递次数：2 ｜ 结果：重复 ｜ 找到的 next：review"
    assert facts_line(outcome="both_ran") == "结果：both_ran"  # a code the catalogue lacks


def test_every_label_a_lesson_passes_print_facts_is_in_the_catalogue():
    """A cell's label missing from facts.toml would stop the lesson with a KeyError."""
    names = set()
    for path in sorted((ROOT / "notebooks").glob("**/[0-9][0-9]_*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                names |= {
                    keyword.arg
                    for node in ast.walk(ast.parse(magicless("".join(cell["source"]))))
                    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "print_facts"
                    for keyword in node.keywords
                }
    assert {"first_worker_exit", "paused_at", "w2_claimed"} <= names  # it reads the cells
    assert sorted(n for n in names if f"facts.label.{n}" not in catalogue("en")) == []


def magicless(source: str) -> str:
    return "\n".join(ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!")))
