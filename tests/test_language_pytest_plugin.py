"""The pytest plugin's failing rows follow LABKIT_LANGUAGE, as the command line does (issue 27):
a failing crash point reads in the reader's language, its failure said from its code."""

from __future__ import annotations

import subprocess
import sys

from chinese import assert_no_english

from labkit.pytest_plugin import failing_rows
from labkit.studies.explorer.report import Exploration, PointResult

EXITED = {"code": "exited", "role": "recovery", "exit_code": 1, "error": "KeyError: 'n'"}


def exploration() -> Exploration:
    """An exploration whose one crash point failed: its recovery exited 1."""
    point = PointResult(
        n=1,
        op="commit",
        detail="notifications.db",
        where="outbox.py:11",
        outcome="failed",
        complaint=None,
        run_dir="/runs/x/1",
        failure=EXITED,
        failed={"code": "worker", "said": EXITED},
    )
    return Exploration("notifier.outbox:graph", "graph", "/runs/x", [point], 1, 1)


def test_the_plugins_rows_say_a_failing_point_in_english_as_they_did():
    [row, _] = failing_rows(exploration()).splitlines()
    assert row == (
        "1: after commit notifications.db at outbox.py:11: failed"
        " (recovery worker exited 1: KeyError: 'n') in /runs/x/1"
    )


def test_the_plugins_rows_say_a_failing_point_in_chinese(chinese):
    shown = failing_rows(exploration())
    [row, _] = shown.splitlines()
    assert row.startswith("1：在提交 notifications.db 之后，位于 outbox.py:11：失败（"), row
    assert "恢复 worker 进程退出，退出码 1：原话“KeyError: 'n'”" in row
    assert row.endswith("，运行目录：/runs/x/1"), row
    assert_no_english(shown, ["pytest", "failure", "explorer"], ["explorer.outcome."])


def test_a_language_there_is_no_catalogue_for_stops_pytest_in_one_line(tmp_path):
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "LABKIT_LANGUAGE": "fr"},
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 4, done.stdout + done.stderr  # pytest's usage error
    assert "unknown language (LABKIT_LANGUAGE) 'fr'; choose one of: en, zh" in done.stderr
