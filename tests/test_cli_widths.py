"""Every table and line the command line prints fits a projector's 100 columns (issue 29, item
5's rule), in English and in Chinese (a Chinese character takes two): study 004's trial table
was 181 columns, the write orders 138, a call's legend and a pitfall's quoted error 170 and more.
A line that holds a run folder's path may be longer: a path is never broken.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from labkit.language import display_width, set_language
from labkit.views.terminal import fit, format_grid, wrap

WIDTH = 100  # the rule itself, not the module's constant: a test of it must not follow a change

COMMANDS = [
    ("orders",),
    ("run", "effect_first", "--kill-at", "effect"),
    ("durability", "--trials", "2"),
    ("durability", "--graph", "parallel", "--mode", "exit", "--trials", "1"),
    ("library",),
    ("pitfall", "checkpoint_during_and_durability"),
    ("pitfall", "durability_without_checkpointer"),
    ("call",),
    ("outbox",),
    ("claim",),
    ("interrupt",),
    ("retry", "--defaults"),
]


def too_wide(text: str, tmp_path) -> list[str]:
    """The lines wider than WIDTH columns, but for those that name the test's own folder."""
    return [
        line
        for line in text.splitlines()
        if display_width(line) > WIDTH and str(tmp_path) not in line
    ]


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_line_a_command_prints_fits_100_columns(tmp_path, command, language):
    env = {**os.environ, "TMPDIR": str(tmp_path), "LABKIT_LANGUAGE": language}
    done = subprocess.run(
        [sys.executable, "-m", "labkit", *command],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) > 1
    assert too_wide(done.stdout, tmp_path) == []


def test_a_wide_table_wraps_in_its_cells_and_a_narrow_one_is_as_it_was():
    header = ["graph", "writes of unsaved checkpoints", "recovery"]
    rows = [["linear", 0, "nothing to resume: the run is lost " * 3]]
    assert format_grid(header, rows).splitlines() == [
        "graph   writes of    recovery",
        "        unsaved",
        "        checkpoints",
        "------  -----------  " + "-" * (WIDTH - 21),
        "linear  0            nothing to resume: the run is lost nothing to resume: the run is "
        "lost nothing",
        "                     to resume: the run is lost",
    ]
    narrow = format_grid(["a", "bb"], [["ccc", 1], ["d", 22]])
    assert narrow == "a    bb\n---  --\nccc  1\nd    22"


def test_chinese_wraps_between_characters_and_a_path_is_never_broken():
    set_language("zh")
    try:
        assert wrap("没有可恢复的内容：这次运行丢失了", 10) == [
            "没有可恢复",
            "的内容：这",
            "次运行丢失",
            "了",
        ]
    finally:
        set_language("en")
    path = "/tmp/" + "x" * 120
    assert fit(f"run folder: {path}") == f"run folder: {path}"
    long = "  " + "word " * 40
    assert fit(long).splitlines()[1].startswith("    word") and len(fit(long).splitlines()) == 3
