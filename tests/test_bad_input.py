"""Bad input gets one clear error that names the valid choices, from the API and the CLI."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import labkit as lk
from labkit.bench import server
from labkit.bench.errors import check_int
from labkit.studies.commit_window.receiver import deliver_all
from labkit.studies.commit_window.spec import RunSpec
from labkit.studies.commit_window.stepping import StepSession
from labkit.studies.commit_window.sweeps import sweep
from labkit.studies.durability.experiment import (
    DurabilitySpec,
    clean_run_seconds,
    describe_checkpoints,
    durability_matrix,
    run_trials,
)
from labkit.studies.durability.pitfalls import run_pitfall
from labkit.studies.explorer.with_files import check_with_files
from labkit.studies.interrupt_resume.experiment import InterruptSpec, run_interrupt
from labkit.studies.leases.experiment import sweep_claims
from labkit.studies.postgres.experiment import run_race
from labkit.studies.unknown_outcome.experiment import sweep_calls

TIMEOUT = "timeout must be a number above 0 and at most 3600"
TRIALS = "trials must be a whole number from 1 to 500"
SLOW_MS = "slow_ms must be a whole number from 0 to 5000"
OUT = "out must be a folder path"
PROGRESS = "progress must be a function or None"
SPECS = "specs must be a non-empty list of DurabilitySpec"
ORDER_CHOICES = "effect_first, checkpoint_first, atomic, idempotent"
LAB_STEP = "labkit.studies.commit_window.worker:effect_first"  # a step to explore
ATOMIC_POINTS = "start, in_transaction, committed, none"


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (("nope",), ORDER_CHOICES),
        (("atomic", "effect"), ATOMIC_POINTS),
        (("atomic", "start", "kill"), "exit, sigkill"),
    ],
)
def test_api_errors_name_the_choices(args, names):
    with pytest.raises(lk.LabError, match=names):
        lk.run(*args)


def test_existing_output_folder_is_refused_and_left_alone(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(lk.LabError, match="already exists"):
        lk.run("atomic", out=tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def cli(*args, cwd, **options):
    """The labkit command, run in `cwd`, which is its temp directory too."""
    env = {**os.environ, "TMPDIR": str(cwd)}
    return subprocess.run(
        [sys.executable, "-m", "labkit", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        **options,
    )


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (("run", "nope"), ORDER_CHOICES),
        (("run", "effect_first", "--kill-at", "committed"), "start, effect, checkpoint, none"),
        (("run", "atomic", "--kill-mode", "term"), "exit, sigkill"),
        (("sweep", "--kill-mode", "term"), "exit, sigkill"),
        (("sweep", "--kill-mode", "term", "--out", "made"), "exit, sigkill"),
        (("run", "atomic", "--out", "made", "--kill-at", "effect"), ATOMIC_POINTS),
        (("durability", "--trials", "2.5"), "trials must be a whole number from 1 to 500, not"),
        (("durability", "--trials", "0"), "trials must be a whole number from 1 to 500, not 0"),
        (("durability", "--trials", "501"), "trials must be a whole number from 1 to 500"),
        (("durability", "--trials", "many"), "trials must be a whole number from 1 to 500"),
        *[  # int() takes these as 10, 2 and 3: a typo or a stray space would pass unnoticed
            (
                ("durability", "--trials", bad),
                f"trials must be a whole number from 1 to 500, not {bad!r}",
            )
            for bad in ("1_0", " 2", "\u0663")
        ],
        (("run", "atomic", "--out", ""), "out must name a folder, not ''"),
        (("sweep", "--out", ""), "out must name a folder, not ''"),
        (("durability", "--slow-ms", "-1"), "slow-ms must be a whole number from 0 to 5000"),
        (("durability", "--slow-ms", "0.5"), "slow-ms must be a whole number from 0 to 5000"),
        (("durability", "--slow-ms", "9999"), "slow-ms must be a whole number from 0 to 5000"),
        (("durability", "--kill-moment", "target_start"), "target_starts, others_done"),
        (("durability", "--graph", "linear", "--kill-moment", "others_done"), "parallel graph"),
        (("interrupt", "--kill-at", "paused"), "a kill needs --cross-process"),
        (("interrupt", "--kill-at", "pause", "--cross-process"), "none, before_create"),
        (("pitfall", "nope"), "choose one of: recover_after_exit_kill, unknown_thread"),
        (("show", "missing"), "missing is not there; give a run folder"),
        (("show", ""), "name a run folder, not ''; give one that holds *.db files"),
        (("run",), f"name a write order, one of: {ORDER_CHOICES}"),
        (("step",), f"name a write order, one of: {ORDER_CHOICES}"),
        (("tool-step",), "name a tool step, one of: queue_pop, queue_claim, pending_first"),
        (("pitfall",), "name a pitfall, one of: recover_after_exit_kill, unknown_thread"),
        (("call", "--timeout", "abc"), "argument --timeout: a number of seconds, not 'abc'"),
        (("call-sweep", "--timeout", "soon"), "a number of seconds, not 'soon'"),
        (
            ("pg-window", "effect_first", "--sweep"),
            "--sweep runs every order at every kill point; leave out the order effect_first",
        ),
        (
            ("pg-durability", "--checkpointer", "sqlite", "--postgres-url", "postgresql://x"),
            "which --checkpointer does not name; leave out --postgres-url",
        ),
        (("retry", "--defaults", "--policy", "nope"), "unknown retry policy 'nope'; choose one"),
        (
            ("retry", "--defaults", "--orders", "3", "--async"),
            "--defaults runs nothing, it prints RetryPolicy()'s table; leave out --orders, --async",
        ),
        (("drain", "--signal", "kill", "--grace", "5"), "sends none; leave out --grace"),
        (
            ("explore", LAB_STEP, "--with-file", ".", "--out", "run"),
            "holds the output folder run: every run would copy itself into itself",
        ),
        (
            ("pg-durability", "--mode", "sync,sync"),
            "argument --mode: durability mode 'sync' is given twice; give each once",
        ),
        (("pg-durability", "--graph", "linear,parallel,linear"), "graph 'linear' is given twice"),
        (("pg-race", "--lock", "none,none"), "lock 'none' is given twice; give each once"),
        (("run", "atomic", "--out", "missing/run"), "/missing is not there; make it first"),
        (
            ("explore", LAB_STEP, "--resume", "true", "--config", "{}", "--durability", "exit")
            + ("--out", "run"),
            "a step answers no interrupts and takes no config or durability mode, as a graph"
            " does; leave out resume, config, durability\n",
        ),
        (("explode",), "orders"),
        ((), "name a command, one of: orders, run, sweep, "),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(tmp_path, args, names):
    done = cli(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and names in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert list(tmp_path.iterdir()) == []  # nothing was written


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ("interrupt", "--key", "custom"),
            "unknown key strategy 'custom'; choose one of: fresh, stable",
        ),
        (
            ("interrupt", "--kill-at", "after_create"),
            "a kill needs --cross-process: only a fresh process can resume",
        ),
        (
            ("outbox", "--consumer", "yours"),
            "unknown consumer 'yours'; choose one of: plain, dedupe",
        ),
        (
            ("call", "--strategy", "custom"),
            "unknown strategy 'custom'; choose one of: new_key, same_key, reconcile, give_up",
        ),
    ],
)
def test_the_cli_offers_only_what_it_can_take_and_says_its_own_flags(tmp_path, args, said):
    """A key, consumer or strategy of the reader's own is Python code, which no flag takes: the
    command line lists the lab's alone, and asks for --cross-process by its flag."""
    done = cli(*args, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"labkit: error: {said}\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("variable", "value", "names"),
    [
        (
            "LABKIT_RUNS_KEEP_MB",
            "99999999999999999999",
            "LABKIT_RUNS_KEEP_MB='99999999999999999999': give a whole number of megabytes "
            "from 0 to 1000000000",
        ),
        ("LABKIT_AS_ON_MACOS", "yes", "LABKIT_AS_ON_MACOS='yes': give 1 (macOS's fallbacks) or 0"),
    ],
)
def test_cli_names_a_bad_environment_variable_in_one_line(
    tmp_path, monkeypatch, variable, value, names
):
    monkeypatch.setenv(variable, value)
    done = cli("run", "atomic", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"labkit: error: {names}") and done.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []  # nothing was written


def test_cli_refuses_an_existing_out_folder(tmp_path):
    done = cli("run", "atomic", "--out", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2 and "already exists" in done.stderr


@pytest.fixture
def nothing_starts(tmp_path, monkeypatch):
    """The temp directory is tmp_path, and the trial server may not be asked for anything:
    a test that uses this fails if its bad call made a folder or reached the server."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def no_server(*args, **kwargs):
        raise AssertionError("the trial server was asked to start before the check")

    monkeypatch.setattr(server, "call", no_server)
    yield tmp_path
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("call", "names"),
    [
        *[
            (lambda bad=bad: lk.run("atomic", timeout=bad), TIMEOUT)
            for bad in (0, -1, math.nan, math.inf, "10", True, 3601)
        ],
        (lambda: RunSpec("atomic", timeout="x"), TIMEOUT),
        (lambda: lk.run("atomic", out=123), OUT),
        (lambda: RunSpec("atomic", out=123), OUT),
        (lambda: lk.run("atomic", kill_at=None), ATOMIC_POINTS),
        (lambda: lk.run(3), ORDER_CHOICES),
        (lambda: lk.run(order=["atomic"]), ORDER_CHOICES),
        (lambda: StepSession("atomic", out=123), OUT),
        (lambda: StepSession("atomic", timeout=0), TIMEOUT),
        (lambda: StepSession("nope"), ORDER_CHOICES),
        *[
            (lambda bad=bad: run_trials([DurabilitySpec()], trials=bad), TRIALS)
            for bad in (2.5, 2.0, 0, 501, True, "4", None)
        ],
        *[
            (lambda bad=bad: DurabilitySpec(slow_ms=bad), SLOW_MS)
            for bad in (2.5, -1, 5001, "250", True)
        ],
        (lambda: DurabilitySpec(timeout=math.nan), TIMEOUT),
        (lambda: DurabilitySpec(kill_moment="target_start"), "target_starts, others_done"),
        (lambda: run_trials(DurabilitySpec()), SPECS),
        (lambda: run_trials([]), SPECS),
        (lambda: run_trials([{"graph": "linear"}]), SPECS),
        (lambda: run_trials([DurabilitySpec()], out=123), OUT),
        (lambda: run_trials([DurabilitySpec()], progress=3), PROGRESS),
        (
            lambda: durability_matrix(graphs="linear"),
            "give a list of graph names, from: linear, parallel; not 'linear'",
        ),
        (
            lambda: durability_matrix(modes=()),
            "name at least one durability mode, from: sync, async",
        ),
        (lambda: durability_matrix(trials=2.5), TRIALS),
        (lambda: durability_matrix(slow_ms=-5), SLOW_MS),
        (lambda: durability_matrix(("linear",), kill_moment="typo"), "target_starts"),
        (lambda: run_interrupt(cross_process="no"), "cross_process must be True or False"),
        (lambda: run_interrupt(cross_process=1), "cross_process must be True or False"),
        (lambda: run_interrupt(kill_at="paused"), "a kill needs cross_process=True"),
        (lambda: InterruptSpec(layout=None), "combined, split"),
        (lambda: run_pitfall(3), "unknown pitfall 3; choose one of: recover_after_exit_kill"),
        (lambda: run_pitfall("nope"), "unknown pitfall 'nope'; choose one of"),
        (
            lambda: sweep(kill_modes="exit"),
            "give a list of kill mode names, from: exit, sigkill; not 'exit'",
        ),
        (
            lambda: sweep(kill_modes=["term"]),
            "unknown kill mode 'term'; choose one of: exit, sigkill",
        ),
        (lambda: sweep(kill_modes=[]), "name at least one kill mode, from: exit, sigkill"),
        (
            lambda: sweep_calls(None),
            "^give a list of strategy names, from: new_key, same_key, reconcile, give_up;"
            " not None$",
        ),
        (lambda: sweep_calls(()), "^name at least one strategy, from: new_key, same_key"),
        *[  # two runs of one name: the second ran into the first one's folder, late
            (call, f"^{twice} is given twice; give each once$")
            for call, twice in [
                (lambda: durability_matrix(("linear", "linear")), "graph 'linear'"),
                (
                    lambda: durability_matrix(modes=("sync", "async", "sync")),
                    "durability mode 'sync'",
                ),
                (
                    lambda: run_trials([DurabilitySpec(), DurabilitySpec(timeout=5)], 1),
                    "spec 'linear.sync.0ms.target_starts'",
                ),
                (lambda: sweep_calls(("new_key", "new_key")), "strategy 'new_key'"),
                (lambda: sweep_calls(faults=("none", "none")), "fault 'none'"),
                (lambda: sweep_claims(methods=("lease", "lease")), "claim method 'lease'"),
                (lambda: sweep_claims(pauses=(100, 100)), "pause 100"),
                (lambda: sweep_claims(leases=(200, 200)), "lease 200"),
                (lambda: sweep(kill_modes=["exit", "exit"]), "kill mode 'exit'"),
            ]
        ],
        (lambda: sweep(parallel=0), "parallel must be a whole number from 1 to 32, not 0"),
        (lambda: sweep(parallel=2.5), "parallel must be a whole number from 1 to 32"),
        (lambda: sweep(progress="bar"), PROGRESS),
        (lambda: sweep(out=b"bytes"), OUT),
        (lambda: deliver_all([("op-1",)]), "deliveries must be .key, payload. pairs of str"),
        (lambda: deliver_all([("op-1", 3)]), "deliveries must be .key, payload. pairs of str"),
        (lambda: deliver_all("op-1"), "deliveries must be .key, payload. pairs of str"),
        (lambda: deliver_all([("op-1", "v1")], out=1), OUT),
        *[
            (lambda bad=bad: lk.CallStepSession(timeout=bad), TIMEOUT)
            for bad in (None, "5", -1, 0, math.nan)
        ],
        *[(lambda bad=bad: lk.compare_exits(out=bad), OUT) for bad in (5, b"x")],
        (lambda: lk.compare_exits(out=""), "out must name a folder, not ''"),
        (lambda: lk.run_outbox_graph(progress="x"), PROGRESS),
        (lambda: lk.clean_runs(dry_run="no"), "dry_run must be True or False, not 'no'"),
        (lambda: lk.execute(None), "spec must be a RunSpec, such as RunSpec.'atomic'"),
        (lambda: lk.execute("x"), "spec must be a RunSpec, such as .*, not 'x'"),
        (lambda: lk.run("atomic", out="a\0b"), "out must be a folder path without a NUL"),
        (lambda: sweep(out="a\0b"), "out must be a folder path without a NUL"),
        (lambda: run_trials([DurabilitySpec()], 1, out="a\0b"), "without a NUL"),
        (lambda: lk.run("atomic", out=""), "out must name a folder, not ''"),
        (lambda: sweep(out=""), "out must name a folder, not ''"),
        (lambda: StepSession("atomic", out=""), "out must name a folder, not ''"),
        (lambda: run_trials([DurabilitySpec()], 1, out=""), "out must name a folder, not ''"),
        (lambda: run_trials([DurabilitySpec()], 1, out="/"), "output folder / already exists"),
        (
            lambda: run_trials([DurabilitySpec()], 1, out="/etc/passwd/x"),
            "cannot make the output folder /etc/passwd/x: Not a directory .*is a file",
        ),
        (
            lambda: lk.run("atomic", out=f"{tempfile.gettempdir()}/missing/x"),
            "^cannot make the output folder .*/missing/x: the folder .*/missing is not there;"
            r" make it first \(labkit makes the last folder of a path only\)$",
        ),
        (lambda: lk.runs_home(1), "room_for must be the name of a folder .*, not 1"),
        (
            lambda: run_interrupt("custom", key_source=1),
            "key_source must be a str holding `def operation_key.state.:`, not 1",
        ),
        (
            lambda: run_interrupt("custom", key_source="return 'k'"),
            "key_source must be a str holding `def operation_key",
        ),
        (lambda: clean_run_seconds("linear"), "spec must be a DurabilitySpec, not 'linear'"),
        (lambda: describe_checkpoints(None), "trial must be a Trial, one of those run_trials"),
        (
            lambda: run_race("none", hold="before commit 1"),
            "unknown kill point for one_transaction 'before commit 1'; choose one of: locked,"
            " in_transaction, committed",
        ),
        (lambda: run_race(step_source="def step(db): pass", hold=3), "hold must be a str, not 3"),
        *[  # / has no name to copy it under, and its copy would hold the whole file system
            (
                lambda bad=bad: check_with_files(bad),
                "with_files takes .* not / itself.*" + re.escape(repr(bad)),
            )
            for bad in ("/", "/tmp/..", [os.path.dirname(__file__), "//"])
        ],
        (
            lambda: lk.explore(
                LAB_STEP, with_files=tempfile.gettempdir(), out=f"{tempfile.gettempdir()}/run"
            ),
            "with_files .* holds the output folder .*/run: every run would copy itself into it",
        ),
        *[  # a step answers no interrupts and takes no config or durability mode
            (lambda given=given: lk.explore(LAB_STEP, **given), f"; leave out {name}$")
            for name, given in [
                ("resume", {"resume": {"action": "approve"}}),
                ("resume_by", {"resume_by": "json:loads"}),
                ("resumes", {"resumes": ["yes", "no"]}),
                ("config", {"config": {"configurable": {"user_id": "u1"}}}),
                ("durability", {"durability": "async"}),
            ]
        ],
        (
            lambda: lk.explore(LAB_STEP, with_files=[tempfile.gettempdir()]),
            "with_files .* holds the runs home .*labkit-runs-",
        ),
    ],
)
def test_api_refuses_bad_values_before_anything_starts(nothing_starts, call, names):
    with pytest.raises(lk.LabError, match=names):
        call()


def test_an_out_folder_is_not_made_for_a_call_that_is_refused(tmp_path):
    with pytest.raises(lk.LabError, match="unknown kill mode 'term'"):
        sweep(kill_modes=["term"], out=tmp_path / "sweep")
    with pytest.raises(lk.LabError, match=TIMEOUT):
        lk.run("atomic", out=tmp_path / "run", timeout=-1)
    assert list(tmp_path.iterdir()) == []


def test_whole_numbers_may_be_numpy_ints_and_come_back_as_int():
    assert type(DurabilitySpec(slow_ms=np.int64(250)).slow_ms) is int
    assert type(check_int("trials", np.int32(3), 1, 500)) is int
    with pytest.raises(lk.LabError, match=r"whole number from 1 to 500, not np.float64\(3.0\)"):
        check_int("trials", np.float64(3.0), 1, 500)


def test_cli_step_on_a_closed_stdin_is_refused_before_a_worker_starts(tmp_path):
    done = cli("step", "atomic", cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert done.returncode == 1 and "Traceback" not in done.stderr  # /dev/null: input ends
    closed = subprocess.run(
        f"exec 0<&-; exec {sys.executable} -m labkit step atomic",
        shell=True,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(tmp_path / "tmp")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert closed.returncode == 2 and closed.stdout == ""
    assert (
        closed.stderr
        == "labkit: error: labkit step reads your keys from stdin, and stdin is closed\n"
    )
    assert not (tmp_path / "tmp").exists()


@pytest.mark.parametrize(
    "command",
    [
        "orders",
        "--help",
        "durability --help",
        "show {run}",
        "run atomic --kill-at committed --json",
        "pitfall unknown_thread",  # the answer comes from the trial server
    ],
)
def test_cli_output_into_a_closed_pipe_ends_quietly(tmp_path, command):
    """`labkit ... | head -1` where head has gone before labkit writes: no traceback, no
    'Exception ignored', no other line on stderr; status 141 as for `cat`, or 0."""
    run = tmp_path / "run"
    if "{run}" in command:
        lk.run("atomic", "committed", out=run)
    labkit = f"{sys.executable} -m labkit {command.format(run=run)}"
    pipeline = f"{labkit} | (exec 0<&-; sleep 1); echo status=${{PIPESTATUS[0]}} >&2"
    done = subprocess.run(
        ["bash", "-c", pipeline], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.stderr in ("status=141\n", "status=0\n"), done.stderr


def test_cli_output_into_head_1_shows_the_first_line_and_no_traceback(tmp_path):
    done = subprocess.run(
        f"{sys.executable} -m labkit orders | head -1",
        shell=True,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.startswith("order ") and done.stdout.count("\n") == 1
    assert done.stderr == ""


def test_a_bad_value_found_in_the_trial_server_comes_back_as_a_lab_error(tmp_path):
    """The trial server's own checks (here: an `out` that exists) reach the caller as the
    LabError they are, not as a ServerError: `except lk.LabError` catches them."""
    spec = {"graph": "linear", "mode": "sync"}
    with pytest.raises(lk.LabError, match=f"output folder {tmp_path} already exists"):
        server.call(
            "labkit.studies.durability.trials:run_trials", specs=[spec], trials=1, out=str(tmp_path)
        )


def test_the_server_passes_a_run_failed_back_as_itself():
    error = server.as_error("RunFailed: the run could not go on: no room left on the disk", "")
    assert type(error) is lk.RunFailed and str(error).startswith("the run could not go on")
    error = server.as_error("labkit.bench.errors.LabError: too long", "did not start")
    assert type(error) is lk.LabError and str(error) == "too long"
    error = server.as_error("ValueError: boom", "")
    assert type(error) is server.ServerError and str(error) == "ValueError: boom"


def test_a_step_session_used_out_of_turn_says_so_in_one_line(tmp_path, no_leftover_workers):
    with StepSession("effect_first", out=tmp_path / "run") as session:
        with pytest.raises(
            lk.LabError, match="cannot recover: the worker is still paused at 'start'"
        ):
            session.recover()
        assert session.kill() == "start"
        for action in (session.proceed, session.kill):
            with pytest.raises(lk.LabError, match="the worker was killed at 'start'; recover"):
                action()
        first = session.recover()
        saved = (tmp_path / "run" / "results.json").read_text()
        with pytest.raises(lk.LabError, match="recovered already"):
            session.recover()
        assert session.result is first
        assert (tmp_path / "run" / "results.json").read_text() == saved  # not run twice
    with pytest.raises(lk.LabError, match="cannot proceed: this step session is closed"):
        session.proceed()


def shell(command: str, tmp_path) -> subprocess.CompletedProcess:
    """`command` in bash, with `labkit` meaning this Python's `-m labkit`, TMPDIR in tmp_path."""
    labkit = f"{sys.executable} -m labkit"
    return subprocess.run(
        ["bash", "-c", command.replace("labkit", labkit, 1)],
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "command", ["orders", "run atomic --json", "run atomic", "--help", "run --help"]
)
def test_output_to_a_full_device_is_one_line_and_every_worker_is_reaped(
    tmp_path, command, no_leftover_workers
):
    done = shell(f"labkit {command} > /dev/full", tmp_path)
    assert done.returncode == 2
    assert done.stderr == "labkit: error: cannot write the output: No space left on device\n"


def test_step_with_stdout_closed_is_refused_before_a_worker_starts(tmp_path):
    done = shell("labkit step effect_first >&-", tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr == (
        "labkit: error: labkit step shows the files on stdout, and stdout is closed\n"
    )
    assert list(tmp_path.iterdir()) == []  # no run folder, not even the runs home


CTRL_C_WHILE_IMPORTING = """
import runpy, sys

class CtrlC:  # a Ctrl-C that lands while Python loads one of labkit's modules
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            raise KeyboardInterrupt

sys.meta_path.insert(0, CtrlC())
sys.argv = ["labkit", "sweep"]
{start}
"""
CONSOLE_SCRIPT = "from labkit.cli import main; sys.exit(main())"  # what `labkit` does
PYTHON_M = "runpy.run_module('labkit', run_name='__main__', alter_sys=True)"  # python -m labkit


@pytest.mark.parametrize(
    ("module", "start"),
    [
        ("labkit.bench.folders", CONSOLE_SCRIPT),  # inside labkit.cli's own imports
        ("labkit.bench.folders", PYTHON_M),
        ("labkit.cli", PYTHON_M),  # before labkit.cli has run a line
    ],
)
def test_ctrl_c_while_labkit_loads_is_one_line_and_status_130(tmp_path, module, start):
    script = CTRL_C_WHILE_IMPORTING.format(module=module, start=start)
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 130
    assert done.stderr == "labkit: interrupted before it started; nothing ran\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("source", "name"), [(1, "my_step"), ("def my_step(c, e, g): pass", None)])
def test_a_readers_step_must_be_source_text_and_a_name(source, name):
    with pytest.raises(lk.LabError, match="step_source and step_name must be"):
        lk.RunSpec("idempotent", step_source=source, step_name=name)


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--port", "0"], "--port must be 1 to 65454, not 0"),
        (["--port", "65455"], "--port must be 1 to 65454, not 65455"),
        (["--cull-after", "0"], "--cull-after must be 60 to 604800 seconds, not 0"),
        (["--cull-after", "-5"], "--cull-after must be 60 to 604800 seconds, not -5"),
        (["--participants", "301"], "--participants must be 1 to 300, not 301"),
    ],
)
def test_the_hub_checks_every_argument_before_it_makes_a_user(monkeypatch, arguments, said):
    """The hub makes system users as root at once: a bad port or culling time found after that
    left users behind for a hub that never started."""
    from labkit.hub import participants, start

    def too_soon(*args: object) -> None:
        raise AssertionError("reached before every argument was checked")

    monkeypatch.setattr(participants, "need_root", too_soon)
    monkeypatch.setattr(participants, "create", too_soon)
    with pytest.raises(lk.LabError) as refused:
        start.run(start.parse(["--participants", "2", *arguments]))
    assert str(refused.value) == said


def test_the_state_viewer_refuses_an_empty_folder_name_it_would_read_as_this_folder():
    """Path("") is ".": `show ""` would look at wherever the reader stands."""
    from labkit.bench.snapshot import snapshot_folder

    with pytest.raises(lk.LabError, match=r"^name a run folder, not ''; give one that holds"):
        snapshot_folder("")
