"""The fork server: lessons 1, 2 and 5's workers are forked from a clean process of their own,
behave as fresh ones do, and end with whatever started them."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

import labkit as lk
from labkit.bench import fork_server
from labkit.bench.launcher import WorkerProcess
from labkit.studies.commit_window.exits import EXITS, LOG, STATUS
from labkit.studies.commit_window.stepping import StepSession
from tests.conftest import unreaped_workers
from tests.test_process_safety import gone_within, marked, python

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a fork server runs on Linux")


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def test_lesson_1s_worker_is_forked_by_a_fork_server_without_langgraph(tmp_path):
    with StepSession("effect_first", out=tmp_path / "step") as step:
        worker = step.worker.proc.pid
        server = fork_server._servers[-1].process.pid
        assert parent_of(worker) == server != os.getpid()
        assert Path(f"/proc/{worker}/cwd").resolve() == step.run_dir.resolve()
        mapped = Path(f"/proc/{server}/maps").read_text()
        assert "_sqlite3" in mapped and "pydantic" not in mapped  # LangGraph's never loaded
        while not step.finished:
            step.proceed()
        result = step.recover()
    assert result.outcome == "consistent" and result.first.exit_code == 0
    assert worker not in unreaped_workers()


@pytest.mark.parametrize("way", EXITS)
def test_a_served_worker_exits_as_a_fresh_one_does(tmp_path, way):
    seen = {}
    for mode in ("fresh", "served"):
        run_dir = tmp_path / mode
        run_dir.mkdir()
        entry = "labkit.studies.commit_window.exits:worker"
        with WorkerProcess(run_dir, "worker", entry, {"exit": way}, start_mode=mode) as process:
            status = process.wait()
        seen[mode] = status, (run_dir / LOG).read_text(), process.report().stderr
    assert seen["served"] == seen["fresh"]
    assert seen["served"][0] == STATUS and seen["served"][2] == ""


def test_a_changed_environment_gets_a_new_fork_server_and_the_old_one_ends(tmp_path, monkeypatch):
    lk.run("atomic", out=tmp_path / "before")
    old = fork_server._servers[-1]
    monkeypatch.setenv("LABKIT_FORK_SERVER_TEST", "seen")
    lk.run("atomic", out=tmp_path / "after")
    new = fork_server._servers[-1]
    assert new is not old and old.process.poll() is not None  # stopped: no worker of its left
    assert b"LABKIT_FORK_SERVER_TEST=seen" in Path(f"/proc/{new.process.pid}/environ").read_bytes()


def test_a_killed_caller_takes_its_fork_server_and_its_paused_worker_along(tmp_path):
    caller = python(
        f"""
        import time
        from labkit.studies.commit_window.stepping import StepSession
        step = StepSession("effect_first", out={str(tmp_path / "step")!r})
        print("paused", flush=True)
        time.sleep(60)
        """,
        tmp_path,
        stdout=-1,
    )
    assert caller.stdout.readline() == "paused\n"
    deadline = time.monotonic() + 10
    while len(marked(str(tmp_path))) < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(marked(str(tmp_path))) >= 4  # the caller, its fork server, the worker, spares
    caller.send_signal(signal.SIGKILL)
    caller.wait()
    caller.stdout.close()
    assert gone_within(5, str(tmp_path)) == []
