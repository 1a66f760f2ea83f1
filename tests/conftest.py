"""Shared helpers: look for worker processes in /proc, the way an operator would; keep the
tests' runs in pytest's own temp folder."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from labkit.bench import fork_server

# Started in the background by a shell without job control (`.ci/run &` in a script), the suite
# inherits SIGINT ignored, and so would every process it starts: the tests that press Ctrl-C
# would test nothing. Python's own handler here gives the children the default back at exec.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def processes_mentioning(*texts: str) -> list[int]:
    """PIDs of live processes whose command line, working folder and stdout, together, contain
    every one of `texts`: a forked worker runs its server's command line, in its run folder,
    writing to its role's file there (`first.stdout`)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            said = " ".join([cmdline, link_of(entry / "cwd"), link_of(entry / "fd" / "1")])
            if all(text in said for text in texts):
                pids.append(int(entry.name))
    return pids


def link_of(path: Path) -> str:
    """Where a link in /proc leads: "" where there is none, or it is not ours to read (another
    user's process, one gone meanwhile)."""
    try:
        return os.readlink(path)
    except OSError:
        return ""


def ctrl_c_while_it_works(process: subprocess.Popen) -> None:
    """Ctrl-C (SIGINT) a process that is sweeping: stopped (SIGSTOP) first, so that its sweep,
    a quarter of a second in all, cannot end before the Ctrl-C lands, however busy the machine;
    then let go on (SIGCONT), where the SIGINT meets it."""
    process.send_signal(signal.SIGSTOP)
    process.send_signal(signal.SIGINT)
    process.send_signal(signal.SIGCONT)


def processes_still_mentioning(*texts: str, seconds: float = 5.0) -> list[int]:
    """`processes_mentioning`, once those SIGKILLed but not reaped by us have had `seconds` to
    die: a process the lab does not reap (an orphan of a worker's code, init's to reap) goes on
    being listed for a moment after its SIGKILL, on a loaded machine."""
    deadline = time.monotonic() + seconds
    while (found := processes_mentioning(*texts)) and time.monotonic() < deadline:
        time.sleep(0.01)
    return found


def forks_of(pid: int) -> list[int]:
    """The live children of `pid` that are its forks (they run its command line): a trial
    server's spares and workers, not a Postgres server a lesson-7 call left running there."""
    try:
        own = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    forks = []
    for child in children_of(pid):
        try:
            if Path(f"/proc/{child}/cmdline").read_bytes() == own:
                forks.append(child)
        except OSError:  # gone meanwhile
            continue
    return forks


def children_of(pid: int) -> list[int]:
    """Live processes whose parent is `pid` (read from /proc, as an operator would)."""
    return [child for child, state, parent in process_states() if parent == pid and state != "Z"]


def process_states() -> list[tuple[int, str, int]]:
    """(pid, state, parent pid) of every process in /proc. A process may end between the listing
    and the read: a glob's own check of each path raises ProcessLookupError then (a CI run saw
    it), so each read is tried on its own."""
    states = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # gone meanwhile
                continue
            states.append((int(name), fields[0], int(fields[1])))
    return states


def run_python(code: str) -> object:
    """Run `code` in a Python of its own (never fork pytest's process); its last line, as JSON."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


STDLIB = set(sys.stdlib_module_names) | set(sys.builtin_module_names)


def worker_imports(*modules: str) -> set[str]:
    """The top-level modules loaded by importing `modules` in an interpreter started as a
    worker starts (`-I -S`, only labkit's folder on the path): a worker's start is the hot
    path, so this must stay the standard library and labkit."""
    from labkit.bench.launcher import LABKIT_ROOT

    code = (
        f"import sys; sys.path.insert(0, {LABKIT_ROOT!r}); import {', '.join(modules)}; "
        "print(' '.join(m.split('.')[0] for m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True
    )
    return set(done.stdout.split()) - {"__main__"}


AS_ROOT = os.getuid() == 0
NOBODY = 65534  # the user `nobody`: permission cases run as it, since root may write anywhere
SEEN_AS = "/srv"  # where user 65534 finds a test's folder: pytest's own temp is root's alone


def labkit_as_nobody(
    folder: Path, *args: str, tmpdir: str = SEEN_AS
) -> subprocess.CompletedProcess:
    """`python -m labkit ARGS` as user 65534, in a mount namespace of its own in which `folder`
    is bind-mounted on /srv (which anyone may enter); the mount vanishes with the namespace."""
    if not AS_ROOT or not shutil.which("unshare"):
        pytest.skip("needs root and unshare to run labkit as another user")
    folder.chmod(0o755)
    labkit = shlex.join([sys.executable, "-m", "labkit", *args])
    user = f"setpriv --reuid={NOBODY} --regid={NOBODY} --clear-groups"
    done = subprocess.run(
        [
            "unshare",
            "-m",
            "sh",
            "-c",
            f"mount --bind {folder} {SEEN_AS} || exit 97\n"
            f"cd / && TMPDIR={tmpdir} exec {user} {labkit}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode == 97:
        pytest.skip("this machine does not let us bind-mount a folder")
    return done


def a_strangers_uid() -> int:
    """Another local user: neither root, nor nobody, nor the lab's own users (root's Postgres
    runs as labkit-postgres), with a name (initdb asks for it)."""
    for name in ("games", "daemon", "bin"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name).pw_uid
    return 4242


STRANGER = a_strangers_uid()


def python_as(uid: int, code: str, *args: str, **env: str) -> subprocess.Popen:
    """This Python running `code` (with `args`) as user `uid` (no groups), started in /, its
    input and output piped: a hostile neighbour on a shared machine. Skips unless root."""
    if not AS_ROOT or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to act as another user")
    user = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    return subprocess.Popen(
        [*user, sys.executable, "-c", textwrap.dedent(code), *args],
        cwd="/",
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1]), **env},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture(scope="session", autouse=True)
def runs_stay_in_pytests_own_temp(tmp_path_factory):
    """The tests' runs (and every process they start) use a temp folder of their own, removed
    afterwards, rather than filling the reader's labkit-runs folder. As root, lesson 7's
    Postgres runs as the user labkit-postgres, who must pass through it (pytest's own is
    root's alone): then it is a folder in /tmp that others may pass through but not list."""
    folder = passable_folder("labkit-tests-") if AS_ROOT else tmp_path_factory.mktemp("tmp")
    patch = pytest.MonkeyPatch()
    patch.setenv("TMPDIR", str(folder))
    patch.setattr(tempfile, "tempdir", str(folder))
    yield
    patch.undo()
    if AS_ROOT:
        shutil.rmtree(folder, ignore_errors=True)


def passable_folder(prefix: str, parent: str = "/tmp") -> Path:
    """A new folder that every user may pass through (0711) but nobody else may list."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    folder.chmod(0o711)
    return folder


@pytest.fixture
def passable_tmp_path(tmp_path) -> Path:
    """A test's own folder that lesson 7's Postgres server may pass through (as root it runs
    as labkit-postgres, and pytest's tmp_path is root's alone): in the tests' TMPDIR, removed
    after."""
    folder = passable_folder("test-", os.environ["TMPDIR"])
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def zombie_children(pid: int | None = None) -> list[int]:
    """Children of `pid` (this process) that have ended but were never reaped: state Z in
    /proc/<child>/stat. A zombie's command line is empty, so only its state and parent tell."""
    parent = os.getpid() if pid is None else pid
    return [child for child, state, of in process_states() if state == "Z" and of == parent]


def unreaped_workers() -> list[int]:
    """Children of this process, or of its fork servers, that ended but were never reaped."""
    parents = [os.getpid(), *fork_server.server_pids()]
    return [pid for parent in parents for pid in zombie_children(parent)]


def leftover_workers(tmp_path: Path, zombies_before: list[int] = ()) -> list[int]:
    """The processes a test left behind: live ones that mention its tmp_path, and workers that
    ended unreaped since `zombies_before` (a worker nobody waited for)."""
    zombies = set(unreaped_workers()) - set(zombies_before)
    return sorted(set(processes_mentioning(str(tmp_path))) | zombies)


@pytest.fixture
def no_leftover_workers(tmp_path: Path):
    """Fail the test if any process that mentions its tmp_path is still alive afterwards, or
    if a child of this process ended during it and nobody reaped it."""
    zombies_before = unreaped_workers()
    yield
    assert leftover_workers(tmp_path, zombies_before) == []


@pytest.fixture
def chinese():
    """The test runs with Chinese chosen, as a Chinese lesson's first cell chooses it; English
    again afterwards (tests/chinese.py checks what is shown)."""
    from labkit.language import set_language

    set_language("zh")
    yield
    set_language("en")


def pytest_terminal_summary(terminalreporter) -> None:
    """Say why the browser tests did not run: without Debian's chromium they skip, and a
    summary's "8 skipped" alone reads like a green suite."""
    skipped = terminalreporter.stats.get("skipped", [])
    browser = [report for report in skipped if "chromium" in str(report.longrepr)]
    if browser:
        terminalreporter.write_line(
            f"{len(browser)} browser test{'s' * (len(browser) > 1)} skipped: /usr/bin/chromium is"
            " missing (install it as .ci/run does: apt-get install chromium fonts-wqy-microhei)",
            yellow=True,
            bold=True,
        )


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Let fixtures see whether the test itself failed (`request.node.rep_call`)."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report
