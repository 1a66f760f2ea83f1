"""One environment: environment.yml, Binder's copy, pyproject and the README agree."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^\s+- ([A-Za-z0-9_.\-]+)==(\S+)", re.MULTILINE)


def environment_pins() -> dict[str, str]:
    return dict(PIN.findall((ROOT / "environment.yml").read_text()))


def test_binder_environment_equals_the_root_one():
    assert (ROOT / "binder" / "environment.yml").read_bytes() == (
        ROOT / "environment.yml"
    ).read_bytes()


def test_environment_pins_python_and_the_lesson_packages():
    text = (ROOT / "environment.yml").read_text()
    assert re.search(r"^\s+- python=3\.\d+$", text, re.MULTILINE)
    assert "conda-forge" in text
    assert {
        "jupyterlab",
        "ipywidgets",
        "matplotlib",
        "langgraph",
        "langgraph-checkpoint-sqlite",
    } <= set(environment_pins())


def test_pyproject_dependencies_agree_with_environment():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = environment_pins()
    for requirement in project["dependencies"]:
        name, version = requirement.split("==")
        assert pins.get(name) == version, requirement


def test_installed_versions_are_the_pinned_ones():
    from importlib.metadata import version

    for name, pinned in environment_pins().items():
        assert version(name) == pinned, name


def test_repo2docker_uses_binder_environment_and_post_build():
    done = subprocess.run(
        [sys.executable, "-m", "repo2docker", "--no-build", "--debug", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    dockerfile = done.stdout + done.stderr
    assert "Building conda environment" in dockerfile
    assert '--file "binder/environment.yml"' in dockerfile
    assert "./binder/postBuild" in dockerfile


def test_post_build_installs_labkit():
    script = (ROOT / "binder" / "postBuild").read_text()
    assert script.startswith("#!") and "pip install" in script and "-e ." in script
    assert (ROOT / "binder" / "postBuild").stat().st_mode & 0o111


def test_readme_gives_exactly_two_commands_and_ci_calls_the_test_one():
    readme = (ROOT / "README.md").read_text()
    quick_start = readme.split("## Quick start")[1].split("\n## ")[0]
    commands = re.findall(r"^(python3 tasks\.py \w+)$", quick_start, re.MULTILINE)
    assert commands == ["python3 tasks.py lab", "python3 tasks.py test"]
    assert "python3 tasks.py test" in (ROOT / ".ci" / "run").read_text()


def test_readme_binder_badges_open_existing_lessons():
    readme = (ROOT / "README.md").read_text()
    targets = re.findall(r"urlpath=lab/tree/([\w/.-]+\.ipynb)", readme)
    lessons = {p.relative_to(ROOT).as_posix() for p in (ROOT / "notebooks").glob("[0-9]*.ipynb")}
    assert set(targets) == lessons


@pytest.mark.parametrize(
    ("platform", "words"),
    [("win32", ["WSL 2", "wsl --install", "python3 tasks.py lab", "Binder"]), ("aix", ["aix"])],
)
def test_tasks_refuses_a_platform_it_cannot_run_on_with_what_to_do(platform, words):
    done = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.platform = {platform!r}; import runpy; "
         "sys.argv = ['tasks.py', 'lab']; runpy.run_path('tasks.py', run_name='__main__')"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("Commit Window Lab runs on Linux and macOS")
    assert all(word in done.stderr for word in words), done.stderr
