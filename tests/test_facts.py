"""A notebook cell's own line of numbers speaks the reader's language, labels and known words."""

from __future__ import annotations

import pytest

import labkit as lk
from labkit.views.facts import facts_line


@pytest.fixture
def chinese():
    lk.set_language("zh")
    yield
    lk.set_language("en")


def test_labels_in_order_and_values_as_python_prints_them():
    line = facts_line(first_worker_exit=91, outcome="lost", same_files_as_exit_91=True)
    assert line == "first worker exit: 91 | outcome: lost | same files as os._exit(91): True"


def test_in_chinese_the_labels_and_known_words_follow(chinese):
    line = facts_line(first_worker_exit=-9, same_files_as_exit_91=False)
    assert line == "第一个 worker 的退出码：-9 ｜ 文件与 os._exit(91) 时相同：否"


def test_a_label_the_catalogue_lacks_is_a_key_error_naming_it():
    with pytest.raises(KeyError, match="facts.label.no_such_label"):
        facts_line(no_such_label=1)
