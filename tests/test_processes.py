"""Every child is reaped, nothing is written outside the run folder, workers stay lean."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import labkit as lk
from labkit.studies.commit_window.runs import order_worker
from labkit.studies.commit_window.stores import create_files
from tests.conftest import STDLIB, ctrl_c_while_it_works, processes_mentioning, worker_imports


def test_recorded_pids_are_gone_after_a_run(tmp_path, no_leftover_workers):
    result = lk.run("effect_first", "checkpoint", "sigkill", out=tmp_path / "run")
    for pid in (result.first.pid, result.recovery.pid):
        assert not Path(f"/proc/{pid}").exists()


def test_a_stuck_worker_is_killed_at_its_timeout(tmp_path, no_leftover_workers):
    order = lk.get_order("effect_first")
    create_files(tmp_path, order.files, order.receiver_dedupes)
    spec = lk.RunSpec("effect_first", timeout=60)  # time enough to reach its point, however busy
    worker = order_worker(spec, tmp_path, "first", pause_at=("effect",))
    with worker:
        assert worker.wait_for_pause() == "effect"
        worker.timeout = time.monotonic() - worker._started + 0.5  # from now on: 0.5 s left
        started = time.monotonic()
        assert worker.wait_for_pause() is None  # nobody answers: the timeout must end it
        assert 0.45 < time.monotonic() - started < 2
    report = worker.report()
    assert report.timed_out and report.exit_code == -9 and report.killed_at == "effect"


def test_leaving_the_context_kills_a_paused_worker(tmp_path, no_leftover_workers):
    order = lk.get_order("atomic")
    create_files(tmp_path, order.files, order.receiver_dedupes)
    try:
        spec = lk.RunSpec("atomic")
        with order_worker(spec, tmp_path, "first", pause_at=("in_transaction",)) as worker:
            assert worker.wait_for_pause() == "in_transaction"
            raise KeyboardInterrupt  # as if the reader pressed Ctrl-C now
    except KeyboardInterrupt:
        pass
    assert worker.report().exit_code == -9


def test_ctrl_c_during_a_sweep_reaps_every_worker(tmp_path):
    sweep_dir = tmp_path / "sweep"
    parent = subprocess.Popen(
        [sys.executable, "-m", "labkit", "sweep", "--kill-mode", "both", "--out", str(sweep_dir)],
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 10
    while not processes_mentioning("/first.stdout", str(sweep_dir)) and time.monotonic() < deadline:
        time.sleep(0.005)  # a first worker runs
    ctrl_c_while_it_works(parent)
    _, stderr = parent.communicate(timeout=20)
    assert parent.returncode == 130, stderr
    assert "killed and reaped" in stderr
    assert processes_mentioning(str(sweep_dir)) == []


def test_a_run_writes_only_inside_its_folder(tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "labkit",
            "run",
            "effect_first",
            "--kill-at",
            "effect",
            "--out",
            str(tmp_path / "run"),
            "--json",
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout)["outcome"] == "duplicate"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "run"]
    assert list(cwd.iterdir()) == []


def test_default_run_folder_is_new_and_temporary(tmp_path):
    first, second = lk.run("atomic"), lk.run("atomic")
    assert first.run_dir != second.run_dir
    home = Path(os.environ.get("TMPDIR", "/tmp")) / f"labkit-runs-{os.getuid()}"
    assert first.run_dir.parent == second.run_dir.parent == home


def test_labkit_clean_removes_the_kept_run_folders_and_nothing_else(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    labkit = [sys.executable, "-m", "labkit"]
    for _ in range(2):
        subprocess.run([*labkit, "run", "atomic"], env=env, check=True, capture_output=True)
    given = tmp_path / "given"  # a folder named with --out belongs to the caller
    subprocess.run([*labkit, "run", "atomic", "--out", str(given)], env=env, check=True)
    neighbour = tmp_path / "commit-window-not-ours"
    neighbour.mkdir()
    home = tmp_path / f"labkit-runs-{os.getuid()}"
    assert len(list(home.iterdir())) == 2

    def clean(*args: str) -> str:
        done = subprocess.run([*labkit, "clean", *args], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert clean("--dry-run").startswith("would remove 2 run folders")
    assert len(list(home.iterdir())) == 2
    assert clean().startswith("removed 2 run folders")
    assert list(home.iterdir()) == [] and given.is_dir() and neighbour.is_dir()
    assert clean().startswith("removed 0 run folders")


def test_worker_imports_only_the_standard_library_and_labkit():
    loaded = worker_imports("labkit.studies.commit_window.worker")
    assert "labkit" in loaded
    assert loaded - {"labkit"} <= STDLIB


def heavy_modules_after(statement: str) -> str:
    """Run `statement` in a fresh interpreter; which heavy libraries did it import?"""
    heavy = {"langgraph", "matplotlib", "ipywidgets", "tqdm"}
    loaded = "{m.split('.')[0] for m in sys.modules}"
    probe = f"import sys; {statement}; print(sorted({loaded} & {heavy}))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_importing_labkit_pulls_in_no_heavy_library():
    assert heavy_modules_after("import labkit; labkit.ORDERS; labkit.run; labkit.sweep") == "[]"


def test_the_kernel_side_of_the_langgraph_lessons_never_imports_langgraph():
    statement = (
        "import labkit.studies.durability.experiment, labkit.studies.durability.pitfalls, "
        "labkit.studies.interrupt_resume.experiment, labkit.workshop.lesson3, "
        "labkit.studies.outbox.replay, "
        "labkit.workshop.lesson4, labkit.views.durability_panel, labkit.views.interrupt_resume"
    )
    assert "langgraph" not in heavy_modules_after(statement)  # it lives in the trial server only


def test_a_run_whose_worker_times_out_says_so(tmp_path, no_leftover_workers):
    # A timeout shorter than a worker's start: the launcher must kill it and the run must say so.
    result = lk.execute(lk.RunSpec("effect_first", "effect", out=tmp_path / "run", timeout=0.001))
    assert result.summary()["timed_out"] == ["first", "recovery"]
    assert result.first.exit_code == -9 and result.outcome == "failed"
    assert (result.failure["code"], result.failure["role"]) == ("timed_out", "first")


def test_the_command_line_text_views_do_not_import_notebook_libraries():
    assert heavy_modules_after("import labkit.cli, labkit.views.text") == "[]"
    probe = "import sys, labkit.cli, labkit.views.text; print('IPython' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_resuming_a_paused_worker_that_a_signal_ended_meanwhile_is_harmless(tmp_path):
    """An orchestrator's SIGTERM reaches a worker paused at a point; the lab then says go on."""
    from labkit.studies.commit_window.stepping import StepSession

    with StepSession("effect_first", out=tmp_path / "run") as session:
        session.worker.proc.send_signal(signal.SIGTERM)
        assert session.worker.proc.wait(timeout=10) == -signal.SIGTERM
        session.worker.resume()  # its pipe has no reader now: no BrokenPipeError
        assert session.worker.wait() == -signal.SIGTERM
