"""A worker that did not do what the run planned (its own error, a timeout), or a disk that
fills up, makes the run "failed" with the reason: no outcome word is claimed for it."""

from __future__ import annotations

import errno
import json
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import labkit as lk
from labkit.bench import server
from labkit.bench.failures import parent_failure, worker_failure
from labkit.bench.launcher import WorkerReport, read_report
from labkit.bench.portable import AS_ON_MACOS
from labkit.language import set_language
from labkit.language.failures import failure_text
from labkit.studies.durability.experiment import DurabilitySpec, run_trials
from labkit.studies.interrupt_resume.experiment import run_interrupt
from labkit.views.commit_window_words import OUTCOMES
from labkit.views.durability import distribution_figure, trials_html
from labkit.views.tables import run_html, study_table_html, sweep_html
from labkit.views.text import format_run, format_sweep
from tests.conftest import forks_of

CLAIMS = [word for word in OUTCOMES if word != "failed"]  # the words a failed run must not say

OVERFLOWING_STEP = """def my_step(control, effect, gate):
    import math

    return math.exp(1000)
"""
HANGING_STEP = """def my_step(control, effect, gate):
    import time

    time.sleep(30)
"""


def readers_step(tmp_path, source: str, **kwargs) -> lk.RunResult:
    spec = lk.RunSpec(
        "idempotent", step_source=source, step_name="my_step", out=tmp_path / "run", **kwargs
    )
    return lk.execute(spec)


def test_a_readers_step_that_raises_fails_the_run_and_every_view_says_why(
    tmp_path, no_leftover_workers
):
    result = readers_step(tmp_path, OVERFLOWING_STEP)
    assert result.first.exit_code == 1 and result.outcome == "failed"
    failure = result.summary()["failure"]
    assert failure == {  # the line of the reader's own code too
        "code": "exited",
        "role": "first",
        "exit_code": 1,
        "error": "OverflowError: math range error",
        "file": "<your step>",
        "line": 4,
    }
    saved = json.loads((tmp_path / "run" / "results.json").read_text())
    assert (saved["outcome"], saved["failure"]) == ("failed", failure)
    text = format_run(result)
    assert "FAILED" in text and "OverflowError" in text
    assert "OverflowError" in format_sweep([result])
    for html in (run_html(result), study_table_html([result]), sweep_html([result])):
        assert "FAILED" in html.upper() and "OverflowError" in html
    for html in (run_html(result), study_table_html([result])):  # (a sweep has a legend)
        assert not any(word.upper() in html for word in CLAIMS)


@pytest.mark.parametrize("as_on_macos", ["0", "1"])  # prctl, or the fallback's SIGALRM watch
def test_a_worker_that_hangs_is_killed_and_the_run_says_it_timed_out(
    tmp_path, no_leftover_workers, monkeypatch, as_on_macos
):
    """The recovery of a reader's step goes on in a fork of its worker (bench.restart), which
    must end with the worker it killed at its timeout, not a watcher's look later."""
    monkeypatch.setenv(AS_ON_MACOS, as_on_macos)  # for the workers this test starts
    result = readers_step(tmp_path, HANGING_STEP, timeout=0.5)
    assert result.outcome == "failed" and result.summary()["timed_out"] == ["first", "recovery"]
    assert (result.failure["code"], result.failure["role"]) == ("timed_out", "first")
    assert 0.5 <= result.failure["seconds"] < 5
    assert "first worker timed out after 0.5" in format_run(result)


def test_a_planned_kill_is_not_a_failure(tmp_path):
    for mode in lk.KILL_MODES:
        result = lk.run("effect_first", "effect", mode, out=tmp_path / mode)
        assert (result.outcome, result.failure) == ("duplicate", None)


def test_an_operation_key_with_a_syntax_error_fails_the_interrupt_run():
    broken = "def operation_key(state):\n  return ("
    result = run_interrupt("custom", "combined", True, "after_create", key_source=broken)
    assert result["outcome"] == "failed" and result["exits"] == {"first": 1}
    failure = result["failure"]
    assert (failure["code"], failure["role"], failure["exit_code"]) == ("exited", "first", 1)
    assert (failure["error"], failure["line"]) == ("SyntaxError: '(' was never closed", 2)
    saved = json.loads((Path(result["run_dir"]) / "results.json").read_text())
    assert saved["failure"] == result["failure"]


def test_a_durability_trial_whose_worker_timed_out_is_failed_and_not_plotted():
    [t] = run_trials([DurabilitySpec("linear", "sync", slow_ms=2000, timeout=0.5)], trials=1)
    assert (t.failure["code"], t.failure["role"]) == ("timed_out", "first")
    assert 0.5 <= t.failure["seconds"] < 5
    assert t.first_exit == -9
    assert t.summary()["failure"] == t.failure
    assert "FAILED" in trials_html([t]) and "timed out" in trials_html([t])
    figure = distribution_figure([t, t])
    dots = [line for ax in figure.axes for line in ax.lines if line.get_linestyle() == "None"]
    assert dots == []  # no trial plotted as an outcome
    assert "2 failed trial(s) not shown" in figure._suptitle.get_text()


def test_a_durability_trial_whose_first_worker_cannot_open_its_files_is_failed():
    # The trial server's waiting spares become the trial's two workers. Limited to 6 open
    # files, the first worker cannot open the checkpoint file: a real error, in a real worker.
    server_pid = server.call("os:getpid")
    spares = forks_of(server_pid)
    assert len(spares) == 2
    for pid in spares:
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (6, 6))
    [t] = run_trials([DurabilitySpec("linear", "sync")], trials=1)
    assert t.first_exit == 1 and not t.killed_inside
    assert (t.failure["code"], t.failure["role"], t.failure["exit_code"]) == ("exited", "first", 1)
    assert "unable to open" in t.failure["error"] or "Too many open files" in t.failure["error"]
    assert "FAILED" in trials_html([t])
    saved = json.loads((Path(t.run_dir) / "results.json").read_text())
    assert saved["failure"] == t.failure


def labkit_with_limited_files(tmp_path, limit_bytes: int) -> subprocess.CompletedProcess:
    """`labkit run` where no file may grow past `limit_bytes`: writes past it fail with EFBIG,
    as on a full disk (SIGXFSZ ignored, so the write fails instead of killing the process)."""
    start = textwrap.dedent(
        f"""
        import os, resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit_bytes}, {limit_bytes}))
        os.execv(sys.executable, [sys.executable, "-m", "labkit", *sys.argv[1:]])
        """
    )
    command = ["run", "effect_first", "--kill-at", "effect", "--out", str(tmp_path / "run")]
    return subprocess.run(
        [sys.executable, "-c", start, *command], capture_output=True, text=True, timeout=60
    )


def assert_failed_without_an_outcome(done: subprocess.CompletedProcess, run_dir) -> None:
    """A full disk is a hostile environment, not a fault of labkit's: status 2, one line that
    says what is wrong and where, as for any other bad place to write."""
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("labkit: error: the run could not go on: no room left on")
    assert done.stderr.count("\n") == 1 and str(run_dir) in done.stderr
    assert "Traceback" not in done.stderr
    results = run_dir / "results.json"
    if results.exists():  # written if there was room for it: it says failed, nothing else
        saved = json.loads(results.read_text())
        assert saved["outcome"] == "failed" and saved["failure"]["code"] == "no_room"


def test_a_file_size_limit_fails_the_run_in_one_line(tmp_path):
    done = labkit_with_limited_files(tmp_path, 4096)
    assert_failed_without_an_outcome(done, tmp_path / "run")
    assert (tmp_path / "run" / "results.json").exists()


def test_a_disk_that_fills_up_mid_run_fails_the_run_in_one_line(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24k", "tmpfs", str(disk)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root in a container that allows it)")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "labkit", "run", "effect_first", "--kill-at", "effect"]
            + ["--out", str(disk / "run")],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (disk / "run" / "before.json").exists()  # the workers ran: the disk filled later
        assert_failed_without_an_outcome(done, disk / "run")
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def test_a_worker_report_cut_short_by_a_full_disk_reads_as_no_report(tmp_path):
    """On a full disk `gate.report` can leave `<role>.json` empty or half-written; the trial
    then reads as the worker's failure, not as a JSONDecodeError of the trial server's."""
    (tmp_path / "recovery.json").write_text("")
    (tmp_path / "first.json").write_text('{"resumed": tr')
    assert read_report(tmp_path, "recovery") == read_report(tmp_path, "first") == {}
    assert read_report(tmp_path, "missing") == {}


def report(**fields) -> WorkerReport:
    said = {"pid": 1, "exit_code": 0, "killed_at": None, "timed_out": False, "seconds": 1.0}
    said.update(stdout="", stderr="")
    return WorkerReport(**{**said, **fields})


TRACEBACK = """Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File "<your step>", line 3, in my_step
ValueError: boom
"""


def test_a_failure_is_a_code_with_fields_not_a_sentence():
    """What bench.failures returns is data (a code, the worker's role, its fields); the error's
    own last line is kept as it is, to be quoted; nothing else is words."""
    assert worker_failure(report(role="first", timed_out=True, seconds=3.0)) == {
        "code": "timed_out",
        "role": "first",
        "seconds": 3.0,
    }
    assert worker_failure(report(role="recovery", exit_code=1, stderr=TRACEBACK)) == {
        "code": "exited",
        "role": "recovery",
        "exit_code": 1,
        "error": "ValueError: boom",
        "file": "<your step>",
        "line": 3,
    }
    assert worker_failure(report(role="relay", exit_code=-9)) == {
        "code": "signal",
        "role": "relay",
        "signal": "SIGKILL",
        "error": None,
    }
    assert worker_failure(report(role="first", exit_code=91, killed_at="effect"), "effect") is None
    assert worker_failure(report(role="first")) is None
    full = OSError(errno.ENOSPC, "No space left on device", "/runs/x/effect.db")
    assert parent_failure(full) == {
        "code": "no_room",
        "role": None,
        "file": "/runs/x/effect.db",
        "error": "No space left on device",
    }


def test_a_failure_is_said_at_the_view_in_the_readers_language():
    """The same failure reads as the English edition always read, and wholly in Chinese (the
    error's own words quoted) when the language is zh."""
    exited = worker_failure(report(role="recovery", exit_code=1, stderr=TRACEBACK))
    hung = worker_failure(report(role="first", timed_out=True, seconds=3.0))
    assert (
        failure_text(exited) == "recovery worker exited 1: ValueError: boom (<your step>, line 3)"
    )
    assert failure_text(hung) == "first worker timed out after 3 s"
    set_language("zh")
    try:
        said = [failure_text(exited), failure_text(hung)]
    finally:
        set_language("en")
    assert said == [
        "恢复 worker 进程退出，退出码 1：原话“ValueError: boom”（你的步骤第 3 行）",
        "首个 worker 进程超时：3 秒后仍未结束",
    ]


def test_a_check_says_which_worker_timed_out_by_its_name(chinese):
    """An exercise's check whose worker ran out of time names it as a failure does (never
    its role's code beside Chinese: "first worker 进程")."""
    from labkit.workshop.reader_code import worker_error

    hung = report(role="first", timed_out=True, exit_code=-9)
    assert worker_error(hung, "", "<your step>") == "首个 worker 进程没有按时结束（是不是死循环？）"
