"""The crash explorer and what the reader's own code starts (issue 24, item 8).

A process the reader's step starts (a child, a daemon that `setsid`s and forks twice, a fork
that keeps the worker's pipes open) ends with its worker and is named in the report.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import uuid
from pathlib import Path

import pytest
from conftest import processes_mentioning
from test_explorer import labkit, write

from labkit.bench.portable import LINUX
from labkit.studies.explorer.replay import explore
from labkit.studies.explorer.stepping import ExplorerStepSession

STEP = """
import os
import subprocess
import time

def start():
{start}

def step(control, effect, gate):
    start()
    with effect:
        effect.add_receipt("job-1", "report")
    with control:
        control.mark_done()
"""
DAEMON = """
    middle = os.fork()
    if middle == 0:
        os.setsid()
        if os.fork() == 0:
{then}
        os._exit(0)
    os.waitpid(middle, 0)
"""
STARTS = {
    "child": '    subprocess.Popen(["sleep", "{seconds}"])',
    "daemon": DAEMON.format(then='            os.execvp("sleep", ["sleep", "{seconds}"])'),
}
KEEPS_THE_PIPES = DAEMON.format(  # a fork that never execs: it holds the worker's pipes
    then="            open({pids!r}, 'a').write(f'{{os.getpid()}}\\n')\n            time.sleep(300)"
)
NO_SUBREAPER = "macOS has no subreaper: a daemon that leaves the worker's session escapes it"


def unique_seconds() -> str:
    """`sleep`'s argument, unique to this test: its command line finds it, and only it."""
    return f"300.{uuid.uuid4().int % 10**9}"


@pytest.mark.parametrize("how", list(STARTS))
def test_what_the_readers_step_starts_ends_with_its_worker_and_is_named(tmp_path, how):
    if how == "daemon" and not LINUX:
        pytest.skip(NO_SUBREAPER)
    seconds = unique_seconds()
    write(tmp_path, "starts.py", STEP.format(start=STARTS[how].format(seconds=seconds)))
    found = explore(f"{tmp_path}/starts.py:step", out=tmp_path / "x")
    assert processes_mentioning("sleep", seconds) == []
    assert found.point(None).left == [f"sleep {seconds}"]  # the run without a crash: one
    assert found.point(None).failure is None and found.point(1).outcome == "duplicate"
    count = sum(len(p.left) for p in found.points)  # it and every recovery that reran the step
    said = f"; your code left {count} processes running (sleep {seconds}); the lab ended them"
    assert count == 2 and said in found.summary(), found.summary()
    if how == "child":  # step mode's workers are fresh ones, the kernel's children
        with ExplorerStepSession(found, out=tmp_path / "step") as session:
            session.run_to(1)
            assert len(processes_mentioning("sleep", seconds)) == 1  # it runs while paused
            session.kill()
        assert processes_mentioning("sleep", seconds) == []


def test_a_fork_that_keeps_the_workers_pipes_neither_outlives_it_nor_makes_it_time_out(tmp_path):
    pids = tmp_path / "daemons.pids"
    write(tmp_path, "keeps.py", STEP.format(start=KEEPS_THE_PIPES.format(pids=str(pids))))
    try:
        found = explore(f"{tmp_path}/keeps.py:step", out=tmp_path / "x")
        assert found.point(None).failure is None, found.point(None).failure
        assert found.seconds < 10, found.summary()  # the worker exits at once, not at 30 s
        if not LINUX:
            pytest.skip(NO_SUBREAPER)
        started = [int(pid) for pid in pids.read_text().split()]
        assert len(started) == sum(len(p.left) for p in found.points) == 2
        assert [pid for pid in started if Path(f"/proc/{pid}").exists()] == []
    finally:
        for pid in [int(p) for p in pids.read_text().split()] if pids.exists() else []:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_the_cli_says_what_the_readers_code_left(tmp_path):
    seconds = unique_seconds()
    write(tmp_path, "starts.py", STEP.format(start=STARTS["child"].format(seconds=seconds)))
    done = labkit(tmp_path, "explore", "starts:step", "--out", str(tmp_path / "x"))
    assert done.returncode == 1, done.stderr  # effect first: a duplicate, as ever
    said = rf"; your code left \d processes running \(sleep {re.escape(seconds)}\); the lab"
    assert re.search(said, done.stdout), done.stdout
    assert processes_mentioning("sleep", seconds) == []
