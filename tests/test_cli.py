"""The CLI prints the same figures as the API, as text or JSON."""

from __future__ import annotations

import json
import subprocess
import sys


def labkit(*args):
    done = subprocess.run(
        [sys.executable, "-m", "labkit", *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def test_run_json_has_the_documented_keys(tmp_path):
    out = json.loads(
        labkit(
            "run", "effect_first", "--kill-at", "effect", "--json", "--out", str(tmp_path / "run")
        )
    )
    assert out == {
        "order": "effect_first",
        "kill_at": "effect",
        "kill_mode": "exit",
        "before": {"done": 0, "receipts": 1},
        "after": {"done": 1, "receipts": 2},
        "first_exit": 91,
        "replay_exit": 0,
        "outcome": "duplicate",
        "timed_out": [],
        "run_dir": str(tmp_path / "run"),
    }


def test_kill_at_none_runs_without_a_crash(tmp_path):
    out = json.loads(
        labkit(
            "run",
            "checkpoint_first",
            "--kill-at",
            "none",
            "--kill-mode",
            "sigkill",
            "--json",
            "--out",
            str(tmp_path / "r"),
        )
    )
    assert (out["first_exit"], out["outcome"]) == (0, "consistent")


def test_sweep_json_lists_every_kill_point(tmp_path):
    rows = json.loads(labkit("sweep", "--json", "--out", str(tmp_path / "s")))
    assert len(rows) == 12
    assert {r["outcome"] for r in rows} == {"consistent", "duplicate", "lost"}


def test_text_views(tmp_path):
    assert "in_transaction" in labkit("orders")
    text = labkit(
        "run", "checkpoint_first", "--kill-at", "checkpoint", "--out", str(tmp_path / "run")
    )
    assert "LOST" in text and "(no rows)" in text
    shown = labkit("show", str(tmp_path / "run"))
    assert "control.db · progress" in shown and "effect.db · receipts" in shown


def test_step_pauses_at_each_point_and_kills_on_k(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "labkit", "step", "effect_first", "--out", str(tmp_path / "run")],
        input="\nk\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "paused at 'start'" in done.stdout and "paused at 'effect'" in done.stdout
    assert "SIGKILL at 'effect'" in done.stdout
    assert "first worker exit: -9" in done.stdout and "DUPLICATE" in done.stdout
