"""One environment: environment.yml, Binder's copy, pyproject and the README agree."""

from __future__ import annotations

import ast
import json
import re
import runpy
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^\s+- ([A-Za-z0-9_.\-]+)==(\S+)", re.MULTILINE)


def environment_pins() -> dict[str, str]:
    return dict(PIN.findall((ROOT / "environment.yml").read_text()))


TASKS = runpy.run_path(str(ROOT / "tasks.py"))  # tasks.py's names, without running it
# What only the tests, benchmarks and contributors use: none of it may reach Binder's image.
DEVELOPMENT_ONLY = ("pytest", "pytest_timeout", "playwright", "ruff", "pre_commit", "repo2docker")
DEVELOPMENT_ONLY += ("nbstripout", "mutmut", "jupyterhub", "jupyterhub_idle_culler")


def test_binder_environment_is_the_root_one_down_to_its_development_line():
    binder = (ROOT / "binder" / "environment.yml").read_text()
    assert binder == TASKS["lessons_environment"](), "run: python3 tasks.py binder"
    assert "pytest" not in binder and "playwright" not in binder and "uv==" not in binder


def test_every_binder_link_opens_the_one_repository_named_in_tasks():
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"https://mybinder\.org/v2/gh/([\w.-]+/[\w.-]+)/", readme)
    assert links and set(links) == {TASKS["BINDER_REPOSITORY"]}


WRITTEN_MODULE = re.compile(r"^%%writefile \S*?(\w+)\.py$")


def imported_top_level(source: str) -> set[str]:
    """The top-level module names a piece of Python imports."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def lessons_imports() -> set[str]:
    """What the notebooks and their solutions import (magics and shell lines left out, and
    the reader's own modules, which a `%%writefile` cell writes)."""
    sources = [p.read_text() for p in (ROOT / "notebooks" / "solutions").glob("*.py")]
    written = set()
    for notebook in (ROOT / "notebooks").rglob("*.ipynb"):
        for cell in json.loads(notebook.read_text())["cells"]:
            if cell["cell_type"] == "code":
                lines = "".join(cell["source"]).splitlines()
                sources.append("\n".join(ln for ln in lines if not ln.startswith(("%", "!"))))
                written |= set(WRITTEN_MODULE.findall("\n".join(lines[:1])))
    imported = set().union(*map(imported_top_level, sources))
    return imported - written - set(sys.stdlib_module_names)


# Modules that Binder's image never runs: the CLI's entry, pytest's plugin, and the workshop
# room's service, which runs only under the hub (JupyterHub is in the development part).
NOT_IN_BINDER = (
    "labkit.__main__",
    "labkit.pytest_plugin",
    "labkit.room.__main__",
    "labkit.room.app",
)


def test_binders_environment_alone_runs_every_lesson_import_and_holds_no_test_tool(tmp_path):
    """A new environment of Binder's pins only (as repo2docker builds it, labkit installed as
    its postBuild does): every labkit module and everything the notebooks import loads, and
    no development tool is there."""
    venv, uv = tmp_path / "binder-env", ROOT / ".venv" / "bin" / "uv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    pins = PIN.findall(TASKS["lessons_environment"]())
    install = [uv, "pip", "install", "--quiet", "--python", venv / "bin" / "python"]
    subprocess.run([*install, *(f"{n}=={v}" for n, v in pins)], check=True, timeout=600)
    site = next(venv.glob("lib/python3*/site-packages"))
    (site / "labkit.pth").write_text(str(ROOT) + "\n")  # what postBuild's editable install does
    probe = f"""
import importlib, importlib.util, json, pkgutil, labkit
for module in pkgutil.walk_packages(labkit.__path__, "labkit."):
    if module.name not in {NOT_IN_BINDER!r}:
        importlib.import_module(module.name)
for name in {sorted(lessons_imports())!r}:
    importlib.import_module(name)
print(json.dumps([n for n in {DEVELOPMENT_ONLY!r} if importlib.util.find_spec(n)]))
"""
    done = subprocess.run(
        [venv / "bin" / "python", "-c", probe], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == []


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
    """The core (the explorer's) and the lab extra are pinned as environment.yml pins them,
    and together they are every package the lessons import (its part above development)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = environment_pins()
    requirements = [*project["dependencies"], *project["optional-dependencies"]["lab"]]
    for requirement in requirements:
        name, version = requirement.split("==")
        assert pins.get(name) == version, requirement
    lessons = PIN.findall(TASKS["lessons_environment"]())
    assert {name for name, _ in lessons} == {r.split("==")[0] for r in requirements}


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
    lessons = {
        p.relative_to(ROOT).as_posix()
        for p in [
            *(ROOT / "notebooks").glob("[0-9]*.ipynb"),
            *(ROOT / "notebooks/zh").glob("[0-9]*.ipynb"),
        ]
    }
    assert set(targets) == lessons  # every lesson, English and Chinese, once at least


@pytest.mark.parametrize("command", [["bogus"], []])
def test_tasks_says_its_usage_and_exits_2_without_a_command_it_has(command):
    done = subprocess.run(
        [sys.executable, "tasks.py", *command], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "usage: python3 tasks.py {lab|test|binder|mutate|hub} [extra arguments]\n"


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
