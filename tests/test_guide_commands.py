"""The instructor guide's live crash points of lessons 3 and 4 run as the guide writes them,
and say what the guide says the room will see (issue 29, item 6): the guide's words are the
command line's own, in English and in Chinese."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

GUIDES = Path(__file__).parent.parent / "notebooks"


def guide_row(language: str, lesson: int, command: str) -> tuple[list[str], str]:
    """The guide's row of `lesson` whose first command starts with `command`: its commands
    (each as arguments) and the row's text."""
    guide = GUIDES / ("zh/INSTRUCTOR_GUIDE.md" if language == "zh" else "INSTRUCTOR_GUIDE.md")
    for row in guide.read_text().splitlines():
        commands = re.findall(r"`(labkit [^`]+)`", row)
        if row.startswith(f"| {lesson} |") and commands and commands[0].startswith(command):
            return [shlex.split(c)[1:] for c in commands], row
    raise AssertionError(f"no row of lesson {lesson} runs {command!r} in {guide}")


def labkit(args: list[str], language: str = "en") -> subprocess.CompletedProcess:
    env = {**os.environ, "LABKIT_LANGUAGE": language}
    done = subprocess.run(
        [sys.executable, "-m", "labkit", *args], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.parametrize("language", ["en", "zh"])
def test_lesson_4s_exit_mode_row_prints_the_guides_words(language):
    [args], row = guide_row(language, 4, "labkit durability --graph linear --mode exit")
    [said] = re.findall(r"[“\"]([^”\"]+)[”\"]", row)  # "nothing to resume: the run is lost"
    printed = labkit([*args, "--trials", "1"], language).stdout
    assert said in printed, printed
    assert "target_starts" in row and "target_starts" in printed  # the kill moment it names


def test_the_kill_moments_help_names_the_node_each_kills_inside():
    shown = " ".join(labkit(["durability", "--help"]).stdout.split())
    assert "c on the linear graph, p3 on the parallel" in shown


def test_lesson_3s_rejected_review_row_keeps_one_ticket_only_with_a_stable_key():
    [combined], row = guide_row("en", 3, "labkit interrupt --reject")
    assert "--layout combined" in row and "vs `--layout split`" in row
    split = [*combined[: combined.index("--layout")], "--layout", "split"]
    fresh = [a for a in combined if a not in ("--key", "stable")]
    tickets = {
        name: len(json.loads(labkit([*args, "--json"]).stdout)["tickets"])
        for name, args in (("combined", combined), ("split", split), ("fresh", fresh))
    }
    assert tickets == {"combined": 1, "split": 0, "fresh": 2}
    assert "--key stable" in row and "makes 2" in row
