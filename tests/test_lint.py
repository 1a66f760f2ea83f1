"""The code passes ruff's lint and format checks (the same as the pre-commit hook)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_check():
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", str(ROOT)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout


def test_ruff_format():
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout
