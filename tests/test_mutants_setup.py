"""Mutation testing's own set-up, checked without running mutmut (issue 33): the modules GUARDS
names and their guard tests exist, every explained survivor is of one of those modules, a
survivor not explained fails the run, and the scheduled job runs `.ci/mutate` over every one.
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "mutate.yml"


@pytest.fixture(scope="module")
def tasks():
    spec = importlib.util.spec_from_file_location("tasks", ROOT / "tasks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_guarded_module_and_its_guard_tests_exist(tasks):
    """A module split or renamed leaves GUARDS naming a file that is gone: mutmut would mutate
    nothing and say nothing."""
    for module, guards in tasks.GUARDS.items():
        assert (ROOT / module).is_file(), module
        files = [g for g in guards if g.startswith("tests/")]
        assert files and all((ROOT / f).is_file() for f in files), (module, files)
        rest = [g for g in guards if g not in files]
        assert rest in ([], ["-k", guards[-1]]), (module, rest)


def test_every_explained_mutant_is_of_a_guarded_module_once(tasks):
    lines = [
        line.split("#", 1)[0].split()
        for line in tasks.EXPLAINED.read_text().splitlines()
        if line.split("#", 1)[0].strip()
    ]
    names = [words[1] for words in lines]
    assert len(names) == len(set(names)), "a mutant listed twice"
    for words in lines:
        kind, name = words  # two words a line: its kind, its name
        assert kind in tasks.EXPLANATIONS, words
        assert re.fullmatch(r"labkit\.[\w.]+\.x[_ǁ]\w*(ǁ\w+)?__mutmut_\d+", name), name
        assert tasks.mutant_module(name) in tasks.GUARDS, name
    assert tasks.explained_mutants() == {name: kind for kind, name in lines}


def test_a_mutants_module_is_read_from_its_name(tasks):
    assert tasks.mutant_module("labkit.bench.home.x_runs_keep_bytes__mutmut_10") == (
        "labkit/bench/home.py"
    )
    assert tasks.mutant_module("labkit.bench.tickets.xǁTicketsǁ__init____mutmut_7") == (
        "labkit/bench/tickets.py"
    )


def test_a_survivor_fails_the_run_unless_it_is_explained(tasks):
    status = {
        "labkit.bench.home.x_a__mutmut_1": "killed",
        "labkit.bench.home.x_a__mutmut_2": "timeout",
        "labkit.bench.home.x_a__mutmut_3": "segfault",
        "labkit.bench.home.x_a__mutmut_4": "survived",
        "labkit.bench.home.x_a__mutmut_5": "survived",
        "labkit.bench.home.x_a__mutmut_6": "no tests",
        "labkit.bench.home.x_a__mutmut_7": "not checked",
        "labkit.bench.home.x_a__mutmut_8": "suspicious",
    }
    explained = {"labkit.bench.home.x_a__mutmut_4": "equivalent"}
    assert tasks.unexplained_survivors(status, explained) == [
        "survived: labkit.bench.home.x_a__mutmut_5",
        "no tests: labkit.bench.home.x_a__mutmut_6",
        "not checked: labkit.bench.home.x_a__mutmut_7",
        "suspicious: labkit.bench.home.x_a__mutmut_8",
    ]


def test_mutate_refuses_a_module_it_does_not_guard_in_one_line(tasks, capsys):
    with pytest.raises(SystemExit) as ended:
        tasks.mutate(["home.py", "nosuch.py"])
    assert ended.value.code == 2
    said = capsys.readouterr()
    assert said.out == ""
    assert said.err.count("\n") == 1 and said.err.startswith("mutate: 'nosuch.py' is not one of: ")
    assert said.err.rstrip().endswith(", ".join(tasks.GUARDS))  # the valid choices


def test_the_scheduled_job_runs_ci_mutate_over_every_guarded_module(tasks):
    script = ROOT / ".ci" / "mutate"
    assert script.is_file() and os.access(script, os.X_OK)
    assert "python3 tasks.py mutate" in script.read_text()
    flow = yaml.safe_load(WORKFLOW.read_text())
    when = flow.get("on", flow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert [entry["cron"] for entry in when["schedule"]]
    assert set(when) <= {"schedule", "workflow_dispatch"}, "on a schedule, not every push"
    (job,) = flow["jobs"].values()
    modules = job["strategy"]["matrix"]["module"]
    assert sorted(modules) == sorted(tasks.GUARDS) and len(modules) == len(set(modules))
    assert [step["run"] for step in job["steps"] if "run" in step] == [
        ".ci/mutate ${{ matrix.module }}"
    ]
