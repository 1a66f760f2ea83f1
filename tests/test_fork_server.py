"""The fork server: lessons 1, 2 and 5's workers are forked from a clean process of their own,
behave as fresh ones do, and end with whatever started them."""

from __future__ import annotations

import os
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

import labkit as lk
from labkit.bench import fork_server
from labkit.bench.launcher import WorkerProcess
from labkit.bench.portable import AS_ON_MACOS
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
        server = parent_of(worker)
        assert server in fork_server.server_pids() and server != os.getpid()
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


def test_a_served_worker_runs_in_its_callers_environment_as_it_is_now(tmp_path, monkeypatch):
    source = (
        "def my_step(control, effect, gate):\n"
        "    import os\n"
        "    payload = os.environ.get('LABKIT_FORK_SERVER_TEST', 'unset')\n"
        "    with effect:\n        effect.add_receipt_once(KEY, payload)\n"
        "    with control:\n        control.mark_done()\n"
    )
    spec = lk.RunSpec("idempotent", step_source=source, step_name="my_step")
    lk.execute(replace(spec, out=tmp_path / "before"))
    servers = fork_server.server_pids()
    monkeypatch.setenv("LABKIT_FORK_SERVER_TEST", "seen")
    result = lk.execute(replace(spec, out=tmp_path / "after"))
    assert result.after.table("receipts").rows[0][2] == "seen"
    assert fork_server.server_pids() == servers  # the same ones


def test_a_recovery_runs_with_another_hash_seed_than_the_worker_before_it(tmp_path):
    source = (
        "def my_step(control, effect, gate):\n"
        "    with effect:\n        effect.add_receipt_once(f'job-17:{hash(PAYLOAD)}', PAYLOAD)\n"
        "    with control:\n        control.mark_done()\n"
    )
    for n in range(3):  # the servers take turns within each run folder, whatever ran before
        point = "after commit 1 (effect.db)"  # its first commit: the receipt
        spec = lk.RunSpec("idempotent", point, step_source=source, step_name="my_step")
        result = lk.execute(replace(spec, out=tmp_path / f"run-{n}"))
        assert result.after.receipts == 2 and result.outcome == "duplicate"


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


def test_where_the_caller_asks_for_macos_ways_a_lesson_worker_starts_fresh(tmp_path, monkeypatch):
    monkeypatch.setenv(AS_ON_MACOS, "1")  # a fork of the server would use Linux's ways
    with StepSession("effect_first", out=tmp_path / "step") as step:
        assert parent_of(step.worker.proc.pid) == os.getpid()
