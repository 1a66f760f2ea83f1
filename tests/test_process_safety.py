"""No process labkit starts imports the caller's code, and none outlives what started it: not
after a Ctrl-C while the trial server starts, nor when the caller is killed, nor after restarts.

Each test marks the Python it starts with an environment variable, which every process started
under it inherits (servers, spares, workers, forked or not): /proc shows which are left.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import labkit as lk
from labkit.bench.launcher import LABKIT_ROOT
from labkit.bench.portable import AS_ON_MACOS
from labkit.studies.commit_window.runs import order_worker
from labkit.studies.commit_window.stores import create_files
from tests.conftest import children_of, processes_mentioning, run_python

MARK = "LABKIT_TEST_MARK"


def marked(value: str) -> list[int]:
    """Live processes (zombies have no environment left) that carry `MARK=value`."""
    entry = f"{MARK}={value}".encode()
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and entry in (proc / "environ").read_bytes().split(b"\0"):
                pids.append(int(proc.name))
        except OSError:  # gone meanwhile, or not ours
            continue
    return pids


def gone_within(seconds: float, value: str, but: tuple[int, ...] = ()) -> list[int]:
    """Wait until no marked process is left (but `but`); return those still there at the end."""
    deadline = time.monotonic() + seconds
    while (left := sorted(set(marked(value)) - set(but))) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def started(
    command: list[str], tmp_path: Path, env: dict | None = None, **popen: object
) -> subprocess.Popen:
    """A marked process in a session of its own (a signal to it reaches it alone), whose runs
    go to tmp_path; `env`: more environment variables."""
    return subprocess.Popen(
        command,
        env={**os.environ, MARK: str(tmp_path), "TMPDIR": str(tmp_path), **(env or {})},
        text=True,
        start_new_session=True,
        **popen,
    )


def python(code: str, tmp_path: Path, **popen: object) -> subprocess.Popen:
    return started([sys.executable, "-c", textwrap.dedent(code)], tmp_path, **popen)


# Linux, and Linux made to use what the lab does on macOS (no prctl, no /proc, no pidfd): each
# said outright, so that a suite run with LABKIT_AS_ON_MACOS=1 set still tests Linux's ways.
PLATFORMS = pytest.mark.parametrize(
    "platform", [{AS_ON_MACOS: "0"}, {AS_ON_MACOS: "1"}], ids=["linux", "as-on-macos"]
)


def test_no_process_imports_code_from_the_callers_folder_or_pythonpath(tmp_path):
    folder = tmp_path / "notebooks"  # a reader's notebook folder, holding modules of their own
    folder.mkdir()
    seen = tmp_path / "imported"
    for name in ("json", "sqlite3", "langgraph", "sitecustomize"):
        (folder / f"{name}.py").write_text(f"open({str(seen)!r}, 'a').write('{name}\\n')\n")
    code = f"""
        import sys; sys.path.insert(0, {LABKIT_ROOT!r})
        import json
        import labkit as lk
        from labkit.studies.durability.experiment import DurabilitySpec, run_trials
        run = lk.run("effect_first", "effect", "sigkill")
        specs = [DurabilitySpec(), DurabilitySpec(mode="async", start_mode="fresh")]
        print(json.dumps([run.outcome, [t.killed_inside for t in run_trials(specs, 1)]]))
        """
    done = subprocess.run(  # the caller itself isolated (-I): only what it starts is on trial
        [sys.executable, "-I", "-c", textwrap.dedent(code)],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(folder), "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert not seen.exists(), seen.read_text()
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["duplicate", [True, True]]


@PLATFORMS
def test_the_server_exits_quietly_when_its_reader_has_gone(tmp_path, platform):
    caller = python(
        """
        import json
        from labkit.bench import server
        server.call("os:getpid")
        process = server._server.process
        process.stdout.close()  # nobody reads the replies any more
        request = {"function": "os:getpid", "kwargs": {}, "progress": False,
                   "stale_interrupt": False}
        process.stdin.write(json.dumps(request) + "\\n")
        process.stdin.flush()
        process.wait(timeout=20)
        """,
        tmp_path,
        env=platform,
        stderr=subprocess.PIPE,
    )
    _, stderr = caller.communicate(timeout=60)
    assert caller.returncode == 0 and stderr == ""
    assert gone_within(5, str(tmp_path)) == []


@PLATFORMS
@pytest.mark.parametrize("delay", [0.05, 0.3, 0.6, 1.0, 2.0])
def test_ctrl_c_while_the_cli_starts_the_server_leaves_nothing_behind(tmp_path, delay, platform):
    # Enough trials that no machine finishes them before the last Ctrl-C (it ends them at once)
    command = [sys.executable, "-m", "labkit", "durability", "--trials", "300"]
    cli = started(command, tmp_path, platform, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    after_its_imports = delay >= 0.3  # counted from the moment the CLI starts its server
    if after_its_imports:
        deadline = time.monotonic() + 30
        while not children_of(cli.pid) and time.monotonic() < deadline:
            time.sleep(0.005)
        delay -= 0.3
    time.sleep(delay)
    cli.send_signal(signal.SIGINT)  # what Ctrl-C in its terminal does (the server has its own)
    _, stderr = cli.communicate(timeout=60)
    assert gone_within(5, str(tmp_path)) == []
    assert "BrokenPipeError" not in stderr
    if after_its_imports:  # its own imports are done: Ctrl-C ends it with one line
        assert cli.returncode == 130 and "Traceback" not in stderr, stderr


# A Ctrl-C pressed at one exact place of labkit's start (a sitecustomize of the test's, run by
# Python before labkit, arms it), where Python reports it in a way of its own: inside a class
# body's __set_name__ it becomes a RuntimeError; inside code compiled from a string, `python -m`
# would end by SIGINT even once it is caught.
PRESSED_AT = {
    "ipaddress-hostmask-set-name": """
        import functools
        set_name = functools.cached_property.__set_name__
        def pressed(self, owner, name):
            if name == "hostmask":
                raise KeyboardInterrupt
            set_name(self, owner, name)
        functools.cached_property.__set_name__ = pressed
        """,
    "a-dataclass-init-compiled-from-a-string": """
        import builtins, dataclasses
        def pressed(*args):
            del dataclasses.exec  # once
            builtins.exec("raise KeyboardInterrupt")
        dataclasses.exec = pressed
        """,
}


@pytest.mark.parametrize("place", PRESSED_AT)
def test_ctrl_c_at_an_import_where_python_reports_it_its_own_way_is_one_line(tmp_path, place):
    (tmp_path / "sitecustomize.py").write_text(textwrap.dedent(PRESSED_AT[place]))
    command = [sys.executable, "-m", "labkit", "durability", "--trials", "20"]
    env = {"PYTHONPATH": str(tmp_path)}
    cli = started(command, tmp_path, env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, stderr = cli.communicate(timeout=60)
    assert (cli.returncode, out) == (130, ""), stderr
    assert stderr == "labkit: interrupted before it started; nothing ran\n"
    assert gone_within(5, str(tmp_path)) == []


# The three places of a start that a Ctrl-C interrupts, each a state the server's /proc shows
# (a kernel's watcher thread, below, stops the server there and presses Ctrl-C): its Python
# runs (its command line is the server's), LangGraph is imported (its serializer's library is
# mapped), its graphs run once (a warm-up's SQLite file is mapped, or psycopg, loaded after it).
START_STAGES = {
    "python": "lambda pid: SERVER_MAIN.encode() in read(f'/proc/{pid}/cmdline').split(b'\\0')",
    "langgraph": "lambda pid: b'/ormsgpack' in read(f'/proc/{pid}/maps')",
    "warm_up": "lambda pid: any(f in read(f'/proc/{pid}/maps') for f in (b'/warm-up-', b'libpq'))",
}


@PLATFORMS
def test_ctrl_c_while_the_server_starts_in_a_long_lived_process(tmp_path, platform):
    stages = ", ".join(START_STAGES.values())  # in the order a start passes them
    kernel = python(
        f"""
        import faulthandler, json, os, signal, sys, threading, time
        from labkit.bench import server
        from labkit.bench.server import SERVER_MAIN

        faulthandler.dump_traceback_later(90, exit=True)  # a hang fails, saying where it was

        def read(path):
            try:
                with open(path, "rb") as file:
                    return file.read()
            except OSError:  # the server is gone, or not yet exec'd
                return b""

        def children(pid):
            return [int(p) for p in read(f"/proc/{{pid}}/task/{{pid}}/children").split()]

        def press_ctrl_c():
            # at its worst moment: the signal's handler runs here, in this thread, and the
            # main thread sleeps on in its read (as when a Ctrl-C lands just before a read
            # begins): it must still be raised there
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)

        def ctrl_c_at(reached, where):
            # Wait for the server to reach the stage, hold it there (SIGSTOP: however loaded
            # the machine, it cannot answer first), then press Ctrl-C
            deadline = time.monotonic() + 60
            while not (started := children(os.getpid())) or not reached(started[0]):
                if time.monotonic() > deadline:  # never seen there: the test fails, not hangs
                    where.append("missed")
                    press_ctrl_c()
                    return
                time.sleep(0.002)
            os.kill(started[0], signal.SIGSTOP)
            where.append(len(children(started[0])))  # spares forked when it was stopped
            press_ctrl_c()

        kept, outcomes, spares = [], [], []
        for reached in ({stages}):
            threading.Thread(target=ctrl_c_at, args=(reached, spares)).start()
            try:
                server.call("os:getpid")
                outcomes.append("answered")
            except KeyboardInterrupt as interrupted:
                kept.append(interrupted)  # as IPython keeps the last traceback
                outcomes.append("interrupted")
        print(json.dumps([outcomes, spares, server.call("os:getpid")]), flush=True)
        sys.stdin.readline()  # the test looks at /proc now
        """,
        tmp_path,
        env=platform,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        outcomes, spares_when_stopped, server_pid = json.loads(kernel.stdout.readline())
        assert (outcomes, spares_when_stopped) == (["interrupted"] * 3, [0, 0, 0])
        alive = sorted(set(marked(str(tmp_path))) - {kernel.pid})
        spares = sorted(set(alive) - {server_pid})
        assert server_pid in alive and len(spares) == 2, alive  # one server, its two spares
        assert all(cmdline(pid) == cmdline(server_pid) for pid in spares)
        kernel.communicate("\n", timeout=30)
        assert kernel.returncode == 0
        assert gone_within(5, str(tmp_path)) == []
    finally:  # a failure above must not leave a stopped server behind
        for pid in marked(str(tmp_path)):
            with contextlib.suppress(ProcessLookupError):  # gone meanwhile
                os.kill(pid, signal.SIGKILL)


def cmdline(pid: int) -> bytes:
    return Path(f"/proc/{pid}/cmdline").read_bytes()


def test_restarting_a_dead_server_leaks_no_descriptor_and_no_exit_handler():
    before, after = run_python(
        """
        import atexit, json, os, signal
        from labkit.bench import server

        def counts():
            return [len(os.listdir("/proc/self/fd")), atexit._ncallbacks()]

        server.call("os:getpid")
        before = counts()
        for _ in range(5):
            server._server.process.send_signal(signal.SIGKILL)
            server._server.process.wait()
            server.call("os:getpid")
        print(json.dumps([before, counts()]))
        """
    )
    assert after == before


@PLATFORMS
def test_a_killed_caller_leaves_no_server_spare_or_worker(tmp_path, platform):
    out = tmp_path / "trials"
    caller = python(
        f"""
        from labkit.studies.durability.experiment import DurabilitySpec, run_trials
        run_trials([DurabilitySpec(slow_ms=1000)], 3, out={str(out)!r})
        """,
        tmp_path,
        env=platform,
    )
    deadline = time.monotonic() + 30
    while not list(out.glob("*/checkpoints.db")) and time.monotonic() < deadline:
        time.sleep(0.02)  # a worker is inside its first trial, sleeping in a slow put()
    assert list(out.glob("*/checkpoints.db"))
    workers = sorted(set(marked(str(tmp_path))) - {caller.pid})
    assert len(workers) >= 3  # the server, its worker, its spare(s)
    caller.send_signal(signal.SIGKILL)
    caller.wait()
    assert gone_within(5, str(tmp_path)) == []


@PLATFORMS
def test_trials_through_the_server_and_fresh_workers_give_the_lessons_outcomes(tmp_path, platform):
    """What lessons 1 and 4 show, with the platform's own ways to wait, close and die along."""
    probe = python(
        """
        import json
        from labkit.bench import portable
        from labkit.studies.commit_window.runs import run
        from labkit.studies.durability.experiment import DurabilitySpec, run_trials
        sqlite = run("effect_first", "effect", "exit").summary()
        [trial] = run_trials([DurabilitySpec()], 1)
        print(json.dumps([portable.LINUX, sqlite["outcome"], trial.summary()]))
        """,
        tmp_path,
        env=platform,
        stdout=subprocess.PIPE,
    )
    out, _ = probe.communicate(timeout=120)
    linux, sqlite_outcome, trial = json.loads(out)
    assert linux is (platform[AS_ON_MACOS] == "0") and sqlite_outcome == "duplicate"
    assert trial["first_exit"] == -9 and trial["resumed"] and not trial["failure"], trial
    assert gone_within(5, str(tmp_path), but=(probe.pid,)) == []


@PLATFORMS
def test_a_killed_worker_takes_the_fork_it_goes_on_in_along_at_once(
    tmp_path, monkeypatch, platform
):
    """A reader's retry goes on in a fork of its worker, as after a real restart (bench.restart,
    the worker only waits for it): killing the worker ends the fork too, at once, not at the
    next look of its SIGALRM watcher where prctl is missing. At once: the fork is in the
    worker's process group, which the kill's SIGKILL reaches (how soon the kernel then ends
    it is the scheduler's: a busy machine took longer than the test's first look)."""
    monkeypatch.setenv(AS_ON_MACOS, platform[AS_ON_MACOS])  # for the worker this test starts
    step = "def my_step(control, effect, gate):\n    pass\n"
    spec = lk.RunSpec("idempotent", step_source=step, step_name="my_step")
    order = spec.write_order
    create_files(tmp_path, order.files, order.receiver_dedupes)
    with order_worker(spec, tmp_path, "recovery", pause_at=("start",)) as worker:
        assert worker.wait_for_pause() == "start"  # said by the fork: its worker waits for it
        both = processes_mentioning(str(tmp_path))
        assert len(both) == 2 and worker.proc.pid in both
        assert {os.getpgid(pid) for pid in both} == {worker.proc.pid}  # one group, the kill's
        worker.kill()
        assert still_running(both, within=5) == []
        assert worker.left == []  # the fork was the lab's own, killed with its worker: not left


def still_running(pids: list[int], within: float) -> list[int]:
    """Those of `pids` still running once they have all ended, or `within` s have passed."""
    deadline = time.monotonic() + within
    while (left := [pid for pid in pids if running(pid)]) and time.monotonic() < deadline:
        time.sleep(0.01)
    return left


def running(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie has no command line left)."""
    try:
        return bool(Path(f"/proc/{pid}/cmdline").read_bytes())
    except OSError:
        return False
