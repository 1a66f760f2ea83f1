"""The runs home in a shared temp directory: used only if it is safely the caller's; `clean`
follows no link, removes only labkit's own folders and never one whose run goes on; a bad
place to write is one clear line (status 2 in the CLI), with nothing written."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

import labkit as lk
from labkit.bench import cleaning, folders
from labkit.bench.folders import MARKER, RUN_DIR_MAX, new_run_dir, release_run_dir
from labkit.bench.postgres import connect
from labkit.bench.postgres.local_server import SOCKET_PATH_MAX
from labkit.bench.postgres.process_table import is_zombie
from labkit.hub.room_postgres import RoomPostgres
from labkit.hub.settings import free_ports
from labkit.language import say
from labkit.language.refusals import error_line
from labkit.studies.commit_window.stepping import StepSession
from tests.conftest import AS_ROOT, NOBODY, SEEN_AS, labkit_as_nobody, python_as


def labkit(*args: str, tmpdir: Path | str, **options: object) -> subprocess.CompletedProcess:
    """`python -m labkit ARGS` with TMPDIR set, from a neutral folder."""
    return subprocess.run(
        [sys.executable, "-m", "labkit", *args],
        env={**os.environ, "TMPDIR": str(tmpdir)},
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
        **options,
    )


def assert_one_clear_line(done: subprocess.CompletedProcess, *words: str) -> None:
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("labkit: error: ") and done.stdout == ""
    for word in words:
        assert word in done.stderr, done.stderr


def tree(folder: Path) -> list[str]:
    """Every path under `folder`, links not followed: what a command may not have changed."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def home_in(tmpdir: Path) -> Path:
    return tmpdir / f"labkit-runs-{os.getuid()}"


def marked_run(root: Path, name: str) -> Path:
    """A folder as labkit marks its run folders, with a file in it."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / MARKER).write_text("a labkit run folder\n")
    (folder / "results.json").write_text("{}")
    return folder


@pytest.fixture
def tmpdir_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's own temp directory, for the API (TMPDIR) and the CLI alike."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setattr("tempfile.tempdir", str(tmpdir))
    return tmpdir


# --- the home must be a real folder of the caller's that no one else can write


def test_a_new_home_is_made_private(tmpdir_env):
    assert lk.runs_home() == home_in(tmpdir_env)
    assert home_in(tmpdir_env).stat().st_mode & 0o777 == 0o700


def test_clean_passes_over_a_fifo_planted_as_a_marker(tmpdir_env):
    """A FIFO named like the marker would block a plain open() forever: clean must not hang."""
    planted = home_in(tmpdir_env) / "commit-window-planted"
    planted.mkdir(parents=True)
    os.mkfifo(planted / MARKER)
    done = labkit("clean", tmpdir=tmpdir_env)
    assert done.returncode == 0, done.stderr
    assert "left 1 that labkit did not make: commit-window-planted" in done.stdout
    assert tree(home_in(tmpdir_env)) == ["commit-window-planted", f"commit-window-planted/{MARKER}"]


def test_a_symlinked_home_is_neither_cleaned_through_nor_written_through(tmp_path, tmpdir_env):
    target = tmp_path / "elsewhere"
    victim = marked_run(target, "commit-window-precious")
    home_in(tmpdir_env).symlink_to(target)
    before = tree(target)
    assert_one_clear_line(labkit("clean", tmpdir=tmpdir_env), "symbolic link")
    assert_one_clear_line(labkit("run", "atomic", tmpdir=tmpdir_env), "symbolic link")
    assert victim.is_dir() and tree(target) == before
    with pytest.raises(lk.LabError, match="symbolic link"):
        lk.clean_runs()


@pytest.mark.parametrize("command", [("run", "atomic"), ("clean",)])
def test_a_world_writable_home_is_refused(tmpdir_env, command):
    home_in(tmpdir_env).mkdir()
    home_in(tmpdir_env).chmod(0o777)
    (home_in(tmpdir_env) / "planted").mkdir()
    done = labkit(*command, tmpdir=tmpdir_env)
    says = "written by others (mode 777); remove it, or set TMPDIR to a folder of yours"
    assert_one_clear_line(done, str(home_in(tmpdir_env)), says)
    assert tree(tmpdir_env) == [home_in(tmpdir_env).name, f"{home_in(tmpdir_env).name}/planted"]


@pytest.mark.parametrize("mode", [0o770, 0o720, 0o702, 0o777], ids=oct)
def test_a_home_that_its_group_or_others_may_write_is_refused(tmpdir_env, mode):
    """Group-writable is as bad as world-writable: either lets someone else plant a folder
    that `clean` or a run would trust (issue 33, item 3: only 0777 was tried)."""
    home_in(tmpdir_env).mkdir()
    home_in(tmpdir_env).chmod(mode)
    with pytest.raises(lk.LabError, match=f"can be written by others \\(mode {mode:o}\\)"):
        lk.runs_home()
    assert list(home_in(tmpdir_env).iterdir()) == []


@pytest.mark.parametrize("mode", [0o700, 0o750, 0o755, 0o705], ids=oct)
def test_a_home_only_the_reader_may_write_is_used_whoever_may_read_it(tmpdir_env, mode):
    home_in(tmpdir_env).mkdir()
    home_in(tmpdir_env).chmod(mode)
    assert lk.runs_home() == home_in(tmpdir_env)


def test_the_trial_server_is_not_started_with_a_bad_home(tmpdir_env):
    home_in(tmpdir_env).mkdir()
    home_in(tmpdir_env).chmod(0o777)
    done = labkit("pitfall", "mistyped_durability", tmpdir=tmpdir_env)
    assert_one_clear_line(done, "written by others")
    assert list(home_in(tmpdir_env).iterdir()) == []  # no warm-up folder either


@pytest.mark.skipif(not AS_ROOT, reason="only root can give a folder to another user")
def test_a_home_owned_by_another_user_is_refused(tmpdir_env):
    home_in(tmpdir_env).mkdir(mode=0o700)
    os.chown(home_in(tmpdir_env), NOBODY, NOBODY)
    assert_one_clear_line(labkit("run", "atomic", tmpdir=tmpdir_env), f"belongs to user {NOBODY}")
    assert list(home_in(tmpdir_env).iterdir()) == []
    with pytest.raises(lk.LabError, match="belongs to user"):
        lk.run("atomic")


@pytest.mark.parametrize("command", [("run", "atomic"), ("clean",)])
def test_a_home_squatted_by_another_user_says_to_set_tmpdir_not_to_remove_it(tmp_path, command):
    squatted = tmp_path / f"labkit-runs-{NOBODY}"  # made by root before the reader's first run:
    squatted.mkdir(mode=0o755)  # in a shared (sticky) /tmp, only root may remove it
    done = labkit_as_nobody(tmp_path, *command)
    says = "belongs to user 0, not to you; set TMPDIR to a folder of yours\n"
    assert_one_clear_line(done, f"{SEEN_AS}/labkit-runs-{NOBODY}", says)
    assert "remove it" not in done.stderr
    assert list(squatted.iterdir()) == []


@pytest.mark.parametrize("command", [("run", "atomic"), ("clean",)])
def test_a_home_that_is_a_file_or_a_dangling_link_is_one_line(tmpdir_env, command):
    home_in(tmpdir_env).write_text("not a folder")
    assert_one_clear_line(labkit(*command, tmpdir=tmpdir_env), "is not a folder")
    assert home_in(tmpdir_env).read_text() == "not a folder"
    home_in(tmpdir_env).unlink()
    home_in(tmpdir_env).symlink_to(tmpdir_env / "gone")
    assert_one_clear_line(labkit(*command, tmpdir=tmpdir_env), "symbolic link")
    assert tree(tmpdir_env) == [home_in(tmpdir_env).name]


# --- clean removes only labkit's own folders, and never one whose run goes on


def test_clean_removes_only_marked_folders_and_follows_no_link(tmp_path, tmpdir_env):
    made = lk.run("atomic").run_dir
    home = made.parent
    assert (made / MARKER).is_file()
    (home / "unmarked").mkdir()
    (home / "unmarked" / "mine.txt").write_text("keep")
    (home / "a-file").write_text("keep")
    outside = marked_run(tmp_path / "outside", "commit-window-outside")
    (home / "link-to-a-run").symlink_to(outside)
    fake = home / "fake-marker"
    fake.mkdir()
    (fake / MARKER).symlink_to(outside / MARKER)  # a marker must be a file, not a link to one
    done = labkit("clean", tmpdir=tmpdir_env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("removed 1 run folders") and "did not make" in done.stdout
    assert not made.exists()
    assert sorted(p.name for p in home.iterdir()) == [
        "a-file",
        "fake-marker",
        "link-to-a-run",
        "unmarked",
    ]
    assert (home / "unmarked" / "mine.txt").read_text() == "keep"
    assert tree(outside.parent) == [
        outside.name,
        f"{outside.name}/{MARKER}",
        f"{outside.name}/results.json",
    ]


def test_clean_leaves_a_run_that_goes_on_and_the_run_ends_well(tmpdir_env):
    with StepSession("effect_first") as session:
        assert session.paused_at == "start"
        home = session.run_dir.parent
        done = labkit("clean", tmpdir=tmpdir_env)  # another process
        assert done.returncode == 0, done.stderr
        assert "removed 0 run folders" in done.stdout and "run goes on" in done.stdout
        assert lk.clean_runs().in_use == [session.run_dir.name]  # this same process
        assert session.proceed() == "effect"
        session.kill()
        result = session.recover()
        assert result.outcome == "duplicate"
        assert (session.run_dir / "results.json").is_file()
    assert lk.clean_runs().removed == [session.run_dir.name]  # over: now it goes
    assert list(home.iterdir()) == []


def test_a_finished_run_is_released_for_clean(tmpdir_env):
    first = lk.run("atomic")
    swept = lk.sweep(parallel=2)
    done = lk.clean_runs()
    assert sorted(done.removed) == sorted([first.run_dir.name, swept[0].run_dir.parent.name])
    assert done.in_use == done.not_ours == []


def test_two_cleans_at_once_remove_everything_once_without_a_traceback(tmpdir_env):
    folders = [new_run_dir(None, prefix="many-") for _ in range(60)]
    for folder in folders:
        release_run_dir(folder)
        for n in range(20):
            (folder / f"file{n}").write_text("x" * 100)
        (folder / "sub").mkdir()
        (folder / "sub" / "deep").write_text("y")
    command = [sys.executable, "-m", "labkit", "clean"]
    cleans = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [clean.communicate(timeout=60) for clean in cleans]
    assert [clean.returncode for clean in cleans] == [0, 0], outputs
    assert all(err == "" for _, err in outputs), outputs
    assert list(home_in(tmpdir_env).iterdir()) == []
    removed = [int(out.split()[1]) for out, _ in outputs]
    assert sum(removed) == 60  # each folder removed by one of them; the other left it be


def test_clean_goes_on_past_a_folder_it_cannot_remove_and_names_it_in_full(tmp_path):
    """As a user who cannot empty a `chmod 500` folder inside a run folder: that run folder is
    left whole and named with its full path; the other run folders are removed all the same."""
    tmpdir = tmp_path / "tmp"
    home = tmpdir / f"labkit-runs-{NOBODY}"
    stuck = marked_run(home, "commit-window-a-stuck")
    (stuck / "sub").mkdir()
    (stuck / "sub" / "kept").write_text("x")
    marked_run(home, "commit-window-b-fine")
    for path in (tmpdir, *tmpdir.rglob("*")):
        os.chown(path, NOBODY, NOBODY)
    home.chmod(0o700)
    (stuck / "sub").chmod(0o500)
    before = tree(stuck)
    done = labkit_as_nobody(tmpdir, "clean")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.startswith("removed 1 run folders"), done.stdout
    seen = f"{SEEN_AS}/{home.name}/{stuck.name}"
    assert (
        done.stderr == f"labkit: error: could not remove {seen} (Permission denied: {seen}/sub)\n"
    )
    assert tree(home) == [stuck.name, *(f"{stuck.name}/{p}" for p in before)]  # left whole


def test_clean_in_a_home_it_may_not_write_leaves_each_run_folder_whole_and_marked(tmp_path):
    """As a user whose runs home is `chmod 500`: no run folder can leave it, so none is
    emptied (its marker gone, the folder was stranded as one labkit did not make)."""
    tmpdir = tmp_path / "tmp"
    home = tmpdir / f"labkit-runs-{NOBODY}"
    run = marked_run(home, "commit-window-a-run")
    for path in (tmpdir, *tmpdir.rglob("*")):
        os.chown(path, NOBODY, NOBODY)
    home.chmod(0o500)
    before = tree(home)
    done = labkit_as_nobody(tmpdir, "clean")
    seen = f"{SEEN_AS}/{home.name}"
    assert (done.returncode, done.stdout) == (2, f"removed 0 run folders (0.0 MB) from {seen}\n")
    said = f"labkit: error: could not remove {seen}/{run.name} (Permission denied: {seen})\n"
    assert done.stderr == said
    assert tree(home) == before  # left whole, its marker with it


def test_a_run_folder_that_could_not_leave_its_parent_is_not_emptied(passable_tmp_path):
    """As a user who may empty a run folder but not write the folder it is in: the removal is
    refused before it starts, the marker kept (a scratch folder's removal, not clean's)."""
    parent = passable_tmp_path / "shut"
    run = marked_run(parent, "scratch-a")
    for path in (parent, *parent.rglob("*")):
        os.chown(path, NOBODY, NOBODY)
    parent.chmod(0o500)
    before = tree(parent)
    code = """
        import sys
        from pathlib import Path
        from labkit.bench.folders import remove_run_dir
        try:
            remove_run_dir(Path(sys.argv[1]))
        except OSError as error:
            print(error)
        """
    said, error = python_as(NOBODY, code, str(run)).communicate(timeout=60)
    assert said == f"[Errno 13] Permission denied: '{parent}'\n", error
    assert tree(parent) == before


# --- the server's warm-up folder is a run folder like any other


WARM_UP_KILLED = """
    import os, signal, labkit.studies.durability.graphs as graphs
    opened = graphs.open_saver
    def open_then_die(folder, *args, **kwargs):
        print(folder, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    graphs.open_saver = open_then_die
    graphs.warm_up()
"""


def test_a_killed_servers_warm_up_folder_is_in_the_home_and_clean_removes_it(tmpdir_env):
    env = {**os.environ, "TMPDIR": str(tmpdir_env)}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(WARM_UP_KILLED)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",
    )
    assert done.returncode == -9, done.stderr
    left = Path(done.stdout.strip())
    assert left.parent == home_in(tmpdir_env) and (left / MARKER).is_file()
    cleaned = labkit("clean", tmpdir=tmpdir_env)
    assert cleaned.stdout.startswith("removed 1 run folders"), cleaned.stderr
    assert list(home_in(tmpdir_env).iterdir()) == []


SLOW_GRAPH = Path(__file__).parent / "outside" / "slow_node.py"


def test_a_killed_explorations_role_passwords_are_in_the_home_and_clean_removes_them(
    passable_tmp_path,
):
    """Each run explored on Postgres has a role, whose password is in a file: a kill -9 of
    `labkit explore --postgres lab` leaves those files in the runs home and nowhere else in
    TMPDIR, and `labkit clean` removes them, with all the exploration left there."""
    tmpdir, home = passable_tmp_path, home_in(passable_tmp_path)
    command = [sys.executable, "-m", "labkit", "explore", f"{SLOW_GRAPH}:graph", "--kind",
               "graph", "--postgres", "lab"]  # fmt: skip
    exploring = subprocess.Popen(
        command, env={**os.environ, "TMPDIR": str(tmpdir)}, cwd="/",
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        # a run role's password file (named as its schema), wherever the lab put it
        while not [*tmpdir.glob("*/labkit_*"), *home.glob("*/labkit_*")]:
            assert exploring.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        exploring.kill()
        exploring.wait()
    assert [p.name for p in tmpdir.iterdir()] == [home.name]
    deadline = time.monotonic() + 60
    while list(home.iterdir()) and time.monotonic() < deadline:  # its processes end meanwhile
        cleaned = labkit("clean", tmpdir=tmpdir)
        assert cleaned.returncode == 0, cleaned.stderr
        time.sleep(0.2)
    assert list(home.iterdir()) == []


ROOM_SERVER_KILLED = """
    import os, signal, sys
    from labkit.hub.room_postgres import RoomPostgres
    room = RoomPostgres(int(sys.argv[1])).start()
    print(room.folder, room.pid, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_hubs_room_postgres_is_in_the_home_and_clean_removes_it(passable_tmp_path):
    """The room's Postgres (labkit/hub/room_postgres.py) lives in a run folder of the runs home:
    a kill -9 of the process that started it leaves nothing elsewhere in TMPDIR, and `labkit
    clean` removes that folder once its server has ended with its parent."""
    tmpdir, home = passable_tmp_path, home_in(passable_tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(ROOM_SERVER_KILLED), str(free_ports(1)[0])],
        env={**os.environ, "TMPDIR": str(tmpdir)}, capture_output=True, text=True, timeout=120,
        cwd="/",
    )  # fmt: skip
    assert done.returncode == -9, done.stderr
    folder, server = done.stdout.split()
    assert Path(folder).parent == home and (Path(folder) / MARKER).is_file()
    assert [p.name for p in tmpdir.iterdir()] == [home.name]
    deadline = time.monotonic() + 60
    while not is_zombie(int(server)) and time.monotonic() < deadline:  # it ends with its parent
        time.sleep(0.05)
    cleaned = labkit("clean", tmpdir=tmpdir)
    assert cleaned.stdout.startswith("removed 1 run folders"), cleaned.stderr
    assert list(home.iterdir()) == []


def test_the_room_postgres_socket_goes_where_its_path_fits(passable_tmp_path, monkeypatch):
    """A runs home so deep that the room's server's socket, named for its port (5 digits), would
    be one byte too long in its data folder: the socket goes to a short run folder of the
    home's, within the limit, the server answers there, and once it has stopped, the home is
    empty."""
    port = free_ports(1)[0]

    def socket_in(depth: int, folder: str) -> bytes:
        home = passable_tmp_path / ("d" * depth) / f"labkit-runs-{os.getuid()}"
        return bytes(home / folder / f".s.PGSQL.{port}")

    data, short = "room-postgres-12345678/data", "pg-socket-12345678/s"  # mkdtemp adds 8
    depth = next(d for d in range(1, 200) if len(socket_in(d, data)) == SOCKET_PATH_MAX)
    assert len(socket_in(depth, short)) < SOCKET_PATH_MAX
    tmpdir = passable_tmp_path / ("d" * depth)
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    room = RoomPostgres(port).start()
    try:
        socket = room.server.socket_folder / f".s.PGSQL.{port}"
        assert socket.is_socket() and len(bytes(socket)) < SOCKET_PATH_MAX
        assert socket.parent.parent.parent == home_in(tmpdir)
        with connect(room.admin_url) as admin:
            assert admin.execute("SELECT current_setting('port')").fetchone() == (str(port),)
    finally:
        room.stop()
    assert list(home_in(tmpdir).iterdir()) == []


def test_a_warm_up_leaves_nothing_behind(tmpdir_env):
    done = subprocess.run(
        [sys.executable, "-c", "import labkit.studies.durability.graphs as g; g.warm_up()"],
        env={**os.environ, "TMPDIR": str(tmpdir_env)},
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",
    )
    assert done.returncode == 0, done.stderr
    assert tree(tmpdir_env) == [home_in(tmpdir_env).name]


# --- a bad place to write: one line that names the path and what is wrong


def long_folder(root: Path, length: int) -> Path:
    """A real folder whose path has about `length` characters (in parts the system allows)."""
    path = root
    while len(str(path)) < length - 101:
        path /= "d" * 100
    path /= "e" * max(1, length - len(str(path)) - 1)
    path.mkdir(parents=True)
    return path


@pytest.mark.parametrize(
    ("out", "words"),
    [
        ("a-file/run", ["a-file is a file", "Not a directory"]),
        ("n" * 300, ["File name too long"]),
        ("deep/" * 100, ["too long for SQLite", f"at most {RUN_DIR_MAX}"]),
    ],
)
def test_a_bad_out_is_one_line_and_nothing_is_written(tmp_path, tmpdir_env, out, words):
    (tmp_path / "a-file").write_text("mine")
    before = tree(tmp_path)
    done = labkit("run", "atomic", "--out", str(tmp_path / out), tmpdir=tmpdir_env)
    assert_one_clear_line(done, *words)
    assert tree(tmp_path) == before
    with pytest.raises(lk.LabError, match=words[0]):
        lk.run("atomic", out=tmp_path / out)
    assert tree(tmp_path) == before


@pytest.mark.skipif(not AS_ROOT, reason="runs the CLI as another user (needs root)")
def test_a_permission_denied_out_or_tmpdir_is_one_line(tmp_path):
    """As user 65534, with the test's folder reachable (bind-mounted on /srv) and only `shut`
    closed to it: the refusal is about `shut` itself, not a folder it cannot even reach."""
    shut = tmp_path / "shut"
    shut.mkdir(mode=0o755)  # root's: another user may look, not write
    seen = f"{SEEN_AS}/shut"
    for args in (("run", "atomic", "--out", f"{seen}/run"), ("run", "atomic"), ("clean",)):
        done = labkit_as_nobody(tmp_path, *args, tmpdir=seen)
        assert_one_clear_line(done, seen, "Permission denied")
    assert list(shut.iterdir()) == []


@pytest.mark.parametrize("command", [("durability", "--trials", "1"), ("sweep",)])
def test_a_tmpdir_too_deep_for_the_deepest_run_is_one_line_before_anything_starts(
    tmp_path, command
):
    """Deep enough for a run folder in the home, not for a trial or a sweep's run inside one:
    refused before the trial server starts or a folder is made, as `run` is for its own."""
    deep = long_folder(tmp_path, 345)  # room for the home's folders, not the runs in them
    done = labkit(*command, tmpdir=deep)
    assert_one_clear_line(done, str(deep), "too long for SQLite")
    assert list(deep.iterdir()) == []


@pytest.mark.parametrize("length", [375, 395])
def test_a_sweep_out_too_deep_for_its_runs_is_refused_before_any_run(tmp_path, tmpdir_env, length):
    root = long_folder(tmp_path / "deep", length - 20)
    out = root / ("s" * (length - len(str(root)) - 1))
    done = labkit("sweep", "--out", str(out), tmpdir=tmpdir_env)
    assert_one_clear_line(done, f"the output folder {out}", "too long for SQLite")
    assert list(root.iterdir()) == [] and list(tmpdir_env.iterdir()) == []
    with pytest.raises(lk.LabError, match="too long for SQLite"):
        lk.sweep(out=out)
    assert list(root.iterdir()) == []


@pytest.mark.parametrize("problem", ["missing", "file", "too long"])
def test_an_unusable_tmpdir_is_one_line_never_a_fallback(tmp_path, problem):
    bad = tmp_path / "gone"
    if problem == "file":
        bad.write_text("")
    elif problem == "too long":
        bad = long_folder(tmp_path, 460)
    before = tree(tmp_path)
    done = labkit("run", "atomic", tmpdir=bad)
    words = {"missing": "No such file", "file": "not a folder", "too long": "too long for SQLite"}
    assert_one_clear_line(done, str(bad), words[problem])
    assert tree(tmp_path) == before  # and nothing in /tmp: the run never started


def unshared(script: str) -> subprocess.CompletedProcess:
    """Run a shell script in a mount namespace of its own: its mounts vanish with it."""
    if not AS_ROOT or not shutil.which("unshare"):
        pytest.skip("needs root and unshare to mount a small file system")
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120
    )
    if "MOUNT-FAILED" in done.stdout:
        pytest.skip("this machine does not let us mount a tmpfs")
    return done


@pytest.mark.parametrize(
    "command", ["durability --trials 2", "interrupt", "pitfall unknown_thread"]
)
def test_a_full_tmpdir_as_the_trial_server_starts_is_one_line(tmp_path, command):
    """The server's warm-up writes in the runs home; on a full disk it fails with a traceback
    of its own, which the reader must not see: one line that says the temp directory is full."""
    mount = tmp_path / "mnt"
    mount.mkdir()
    done = unshared(
        f"T={mount}; mount -t tmpfs -o size=64k tmpfs $T || {{ echo MOUNT-FAILED; exit; }}\n"
        "dd if=/dev/zero of=$T/fill bs=1k count=40 2>/dev/null\n"
        f"cd / && TMPDIR=$T {sys.executable} -m labkit {command}; echo status=$?"
    )
    assert "status=2" in done.stdout, done
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"labkit: error: the temp directory {mount} is full")


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        ("mount -o remount,ro $T", "Read-only file system"),
        ("cat /dev/zero > $T/fill 2>/dev/null; true", "No space left on device"),
    ],
)
def test_a_read_only_or_full_tmpdir_is_one_line(tmp_path, setup, words):
    mount = tmp_path / "mnt"
    mount.mkdir()
    command = f"{sys.executable} -m labkit run atomic"
    done = unshared(
        f"T={mount}; mount -t tmpfs -o size=64k tmpfs $T || {{ echo MOUNT-FAILED; exit; }}\n"
        f"{setup}\ncd / && TMPDIR=$T {command}; echo status=$?; ls -A $T/labkit-runs-* 2>&1"
    )
    assert "status=2" in done.stdout, done
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("labkit: error: cannot make ") and words in done.stderr
    assert str(mount) in done.stderr
    assert "commit-window" not in done.stdout  # no half-made run folder is left


def finished_run(megabytes: int, made_at: float) -> Path:
    """A run folder in the home, as a finished run leaves it: `megabytes` of files (its marker
    included), made at `made_at` (seconds since the epoch), released for clean and prune."""
    folder = new_run_dir(None, "pruned-")
    marker = (folder / MARKER).stat().st_size
    (folder / "data.bin").write_bytes(b"\0" * max(0, megabytes * 1_000_000 - marker))
    release_run_dir(folder)
    os.utime(folder / MARKER, (made_at, made_at))
    return folder


@pytest.fixture
def pruning(tmpdir_env, monkeypatch):
    """The runs home with pruning to 2 MB, and this process never pruned yet."""
    monkeypatch.setenv("LABKIT_RUNS_KEEP_MB", "0")  # no prune while the runs are laid out
    monkeypatch.setattr("labkit.bench.cleaning._pruned_at", None)
    held_before = set(lk.bench.folders._in_use)
    yield monkeypatch
    for folder in set(lk.bench.folders._in_use) - held_before:  # the runs "running" here
        release_run_dir(folder)


def test_a_new_run_prunes_the_oldest_finished_runs_beyond_the_size_kept(pruning):
    old, older, newest = (finished_run(1, t) for t in (2_000, 1_000, 3_000))
    running = new_run_dir(None, "running-")  # in use: never pruned, whatever its age
    os.utime(running / MARKER, (10, 10))
    pruning.setenv("LABKIT_RUNS_KEEP_MB", "2")
    made = new_run_dir(None, "new-")
    assert made.exists() and running.exists() and newest.exists() and old.exists()
    assert not older.exists()  # 1 MB + 1 MB kept, the third oldest finished run went
    assert lk.clean_runs(dry_run=True).home_size >= 2_000_000


def test_once_a_run_does_not_fit_every_older_one_goes_too(pruning):
    small_oldest, big, newest = (finished_run(mb, t) for mb, t in ((0, 1), (3, 2), (1, 3)))
    pruning.setenv("LABKIT_RUNS_KEEP_MB", "2")
    new_run_dir(None, "new-")
    assert newest.exists() and not big.exists() and not small_oldest.exists()


def test_a_finished_runs_size_is_read_from_its_marker_and_a_dead_ones_walked(tmpdir_env):
    finished = finished_run(1, 1_000)  # released: its size went into its marker
    (finished / "added-later.bin").write_bytes(b"\0" * 500_000)  # not walked again: not counted
    code = (  # a run whose process died before its end: no size in its marker
        "import os, sys; from labkit.bench.folders import new_run_dir\n"
        "folder = new_run_dir(None, 'died-'); (folder / 'data.bin').write_bytes(bytes(700))\n"
        "print(folder, flush=True); os.kill(os.getpid(), 9)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == -9, done.stderr
    died = Path(done.stdout.strip())
    marker = (died / MARKER).stat().st_size
    assert lk.clean_runs(dry_run=True).home_size == 1_000_000 + 700 + marker


def test_pruning_looks_at_most_once_in_a_while_and_can_be_turned_off(pruning):
    pruning.setenv("LABKIT_RUNS_KEEP_MB", "1")
    assert lk.bench.folders.prune_runs() is not None
    first = finished_run(2, 1)
    assert lk.bench.folders.prune_runs() is None and first.exists()  # too soon: a sweep's runs
    pruning.setattr("labkit.bench.cleaning._pruned_at", None)
    pruning.setenv("LABKIT_RUNS_KEEP_MB", "0")
    assert lk.bench.folders.prune_runs() is None and first.exists()


@pytest.mark.parametrize("value", ["lots", "-5", "1.5", "２", "99999999999999999999", "9" * 5000])
def test_a_bad_size_to_keep_is_one_line_before_any_folder_is_made(tmpdir_env, monkeypatch, value):
    monkeypatch.setenv("LABKIT_RUNS_KEEP_MB", value)
    before = tree(tmpdir_env)
    done = labkit("run", "atomic", tmpdir=tmpdir_env)
    assert_one_clear_line(done, "LABKIT_RUNS_KEEP_MB", "whole number of megabytes")
    assert tree(tmpdir_env) == before


def test_clean_dry_run_says_how_big_the_home_is_and_how_it_is_pruned(tmpdir_env):
    marked_run(home_in(tmpdir_env), "commit-window-a")
    (home_in(tmpdir_env) / "commit-window-a" / "big.bin").write_bytes(b"\0" * 1_500_000)
    done = labkit("clean", "--dry-run", tmpdir=tmpdir_env)
    assert done.returncode == 0, done.stderr
    assert "the runs home holds 1.5 MB; new runs prune it to the newest 200 MB" in done.stdout
    assert (home_in(tmpdir_env) / "commit-window-a").exists()


# --- what mutation testing found unguarded in folders.py (issue 33; tests/README.md)


def test_cannot_make_names_the_folder_and_the_reason_in_the_systems_words(tmp_path):
    no_entry = OSError(errno.ENOENT, "No such file or directory")
    nowhere = Path("/nowhere/x")
    said = f"cannot make the runs home {nowhere}: No such file or directory"
    assert folders.cannot_make("the runs home", nowhere, no_entry) == said
    not_dir = OSError(errno.ENOTDIR, "Not a directory")  # and no file on the way
    said = f"cannot make the output folder {nowhere}: Not a directory"
    assert folders.cannot_make("the output folder", nowhere, not_dir) == said
    (tmp_path / "f").write_text("")
    out = tmp_path / "f" / "a" / "b"
    said = f"cannot make x {out}: Not a directory ({tmp_path / 'f'} is a file)"
    assert folders.cannot_make("x", out, not_dir) == said
    assert folders.cannot_make("x", nowhere, OSError("odd")) == f"cannot make x {nowhere}: odd"


def exactly_this_long(parent: Path, length: int) -> Path:
    """A new folder whose path has exactly `length` characters."""
    path = parent
    while len(str(path)) < length:
        path = path / ("d" * min(200, length - len(str(path)) - 1))
    assert len(str(path)) == length
    path.mkdir(parents=True)
    return path


@pytest.mark.parametrize("too_deep", [False, True])
def test_a_run_folder_as_deep_as_sqlite_allows_is_made_and_one_character_more_refused(
    tmp_path, monkeypatch, too_deep
):
    name = f"/labkit-runs-{os.getuid()}/commit-window-" + "x" * 8  # mkdtemp adds 8
    tmpdir = exactly_this_long(tmp_path, RUN_DIR_MAX - len(name) + too_deep)
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setattr("tempfile.tempdir", str(tmpdir))
    out = tmpdir / ("o" * (RUN_DIR_MAX - len(str(tmpdir)) - 1 + too_deep))
    if too_deep:
        with pytest.raises(lk.LabError, match="too long for SQLite"):
            new_run_dir(None)
        with pytest.raises(lk.LabError, match="too long for SQLite"):
            new_run_dir(out)
        assert sorted(p.name for p in tmpdir.iterdir()) == []
        return
    made = new_run_dir(None)
    release_run_dir(made)
    assert made.name.startswith("commit-window-") and len(str(made)) == RUN_DIR_MAX
    folders.check_run_dir(out, "p")  # nothing deeper asked for
    assert len(str(new_run_dir(out))) == RUN_DIR_MAX


def test_a_runs_home_as_deep_as_sqlite_allows_is_used(tmp_path, monkeypatch):
    home = f"/labkit-runs-{os.getuid()}"
    tmpdir = exactly_this_long(tmp_path, RUN_DIR_MAX - len(home))
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    assert len(str(lk.runs_home())) == RUN_DIR_MAX  # nothing to be made in it asked for


def test_what_new_run_dir_could_not_make_is_refused_first_in_the_lessons_words(tmp_path):
    (tmp_path / "there").mkdir()
    said = f"output folder {tmp_path / 'there'} already exists; name a new one"
    with pytest.raises(lk.LabError) as raised:
        folders.check_run_dir(tmp_path / "there", "p")
    assert str(raised.value) == said
    (tmp_path / "file").write_text("")
    out = tmp_path / "file" / "out"
    with pytest.raises(lk.LabError) as raised:
        folders.check_run_dir(out, "p")
    said = f"cannot make the output folder {out}: Not a directory ({tmp_path / 'file'} is a file)"
    assert str(raised.value) == said


def test_an_output_folder_another_user_may_not_make_is_refused_first(passable_tmp_path):
    """As a user who may not write in the folder (root's, 0711): Permission denied."""
    folders.check_run_dir(passable_tmp_path / "mine", "p")  # root may: nothing to say
    out = passable_tmp_path / "out"
    code = """
        import sys
        from labkit.bench.errors import LabError
        from labkit.bench.folders import check_run_dir
        try:
            check_run_dir(sys.argv[1], "p")
        except LabError as error:
            print(error)
        """
    user = python_as(NOBODY, code, str(out))
    said, error = user.communicate(timeout=60)
    assert said == f"cannot make the output folder {out}: Permission denied\n", error


def test_a_run_folder_and_its_marker_are_private_whatever_the_umask(tmpdir_env):
    before = os.umask(0)
    try:
        made = new_run_dir(None)
        swept = new_run_dir(None, "sweep-")
    finally:
        os.umask(before)
    for folder in (made, swept):
        release_run_dir(folder)
    assert home_in(tmpdir_env).stat().st_mode & 0o777 == 0o700
    assert (made / MARKER).stat().st_mode & 0o777 == 0o600
    assert made.name.startswith("commit-window-") and swept.name.startswith("sweep-")


@pytest.mark.parametrize("fails", ["open", "rename"])
def test_a_run_folder_that_cannot_be_marked_is_removed_and_named(tmpdir_env, monkeypatch, fails):
    real = getattr(os, fails)

    def no_room(path, *args, **options):
        if str(path).endswith(f"{MARKER}.new"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, *args, **options)

    monkeypatch.setattr(os, fails, no_room)
    with pytest.raises(lk.LabError) as raised:
        new_run_dir(None)
    home = home_in(tmpdir_env)
    assert str(raised.value) == f"cannot make a run folder in {home}: No space left on device"
    assert list(home.iterdir()) == []
    os.fstat(1)  # the standard output is still open: only the marker was closed


def test_a_run_folder_is_held_until_the_call_that_made_it_returns(tmpdir_env):
    @folders.holds_run_dirs
    def inner() -> Path:
        return new_run_dir(None, "inner-")

    @folders.holds_run_dirs
    def outer() -> tuple:
        mine = new_run_dir(None, "outer-")
        kept = new_run_dir(None, "kept-")
        folders.outlive_call(kept)  # a server that outlives the call
        return mine, kept, inner(), lk.clean_runs()

    outside = []  # outside any call, even in a thread that never made one: nothing to keep
    thread = threading.Thread(target=lambda: outside.append(folders.outlive_call(tmpdir_env)))
    thread.start()
    thread.join()
    assert outside == [None]
    mine, kept, theirs, during = outer()
    assert during.removed == [theirs.name]
    assert sorted(during.in_use) == sorted([mine.name, kept.name])
    after = lk.clean_runs()
    assert (after.removed, after.in_use) == ([mine.name], [kept.name])
    release_run_dir(kept)
    release_run_dir(kept)  # twice, or a folder that was never a run's: nothing to release
    release_run_dir(tmpdir_env)
    assert lk.clean_runs().removed == [kept.name]


def planted(home: Path, name: str, made_at: float, size: int) -> Path:
    """A finished run folder of `size` bytes (its marker included), made at `made_at`."""
    folder = home / name
    folder.mkdir(parents=True)
    (folder / MARKER).write_text("x" * min(size, 10))
    if size > 10:
        (folder / "data").write_bytes(b"\0" * (size - 10))
    os.utime(folder / MARKER, (made_at, made_at))
    return folder


def test_clean_counts_what_it_removes_keeps_and_leaves_and_goes_on_past_each(
    tmpdir_env, monkeypatch
):
    home = lk.runs_home()
    running = new_run_dir(None, "running-")  # in use: left, whatever its age
    os.utime(running / MARKER, (700, 700))
    gone = planted(home, "gone", 600, 100)  # another clean takes it while we wait
    kept = planted(home, "kept", 500, 300)
    blocked = planted(home, "blocked", 400, 100)
    failing = planted(home, "failing", 300, 100)
    old = planted(home, "old", 200, 200)
    tiny = planted(home, "tiny", 100, 1)  # older than one that did not fit: goes too
    (home / "unmarked").mkdir()
    real_flock, real_blocks, real_remove = fcntl.flock, cleaning.what_blocks_removal, os.unlink

    def flock(fd, operation):
        if os.readlink(f"/proc/self/fd/{fd}") == str(gone / MARKER):
            shutil.rmtree(gone)  # as another clean does, marker last
        return real_flock(fd, operation)

    def unlink(path, *args, **options):
        if str(path) == str(failing / "data"):
            raise OSError(errno.EBUSY, "Device or resource busy", str(path))
        return real_remove(path, *args, **options)

    monkeypatch.setattr(fcntl, "flock", flock)
    monkeypatch.setattr(os, "unlink", unlink)
    monkeypatch.setattr(
        cleaning,
        "what_blocks_removal",
        lambda folder: f"Permission denied: {folder}" if folder == blocked else real_blocks(folder),
    )
    done = lk.clean_runs(keep_bytes=300)
    running_size = folders.folder_size(running)
    assert done.home == home
    assert done.in_use == [running.name] and done.kept == [kept.name]
    assert done.stuck == [
        f"{blocked} (Permission denied: {blocked})",
        f"{failing} (Device or resource busy: {failing / 'data'})",
    ]
    assert done.removed == [old.name, tiny.name]
    assert done.size >= 100 + 200 + 1  # (the folder it failed to remove is counted as well)
    assert done.not_ours == ["unmarked"]
    assert done.home_size == running_size + 100 + 300 + 100 + 100 + 200 + 1
    release_run_dir(running)


def test_clean_keeps_nothing_unless_asked_and_checks_its_arguments(tmpdir_env):
    one_byte = planted(lk.runs_home(), "one-byte", 100, 1)
    with pytest.raises(lk.LabError) as raised:
        lk.clean_runs(dry_run="no")
    assert str(raised.value) == "dry_run must be True or False, not 'no'"
    most = 1 << 62
    with pytest.raises(lk.LabError) as raised:
        lk.clean_runs(keep_bytes=most + 1)
    assert (
        str(raised.value) == f"keep_bytes must be a whole number from 0 to {most}, not {most + 1}"
    )
    assert lk.clean_runs(keep_bytes=most).kept == [one_byte.name]
    assert lk.clean_runs().removed == [one_byte.name]


def test_clean_removes_a_link_in_a_run_folder_not_what_it_points_to(tmp_path, tmpdir_env):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("keep")
    run = planted(lk.runs_home(), "linked", 100, 1)
    (run / "link").symlink_to(outside)
    assert lk.clean_runs().removed == [run.name]
    assert (outside / "keep").read_text() == "keep"


def test_the_newest_run_comes_first_and_an_unmarked_entry_last(tmpdir_env):
    home = lk.runs_home()
    for name, made_at in (("a", 300), ("b", 100), ("c", 200)):
        planted(home, name, made_at, 1)
    (home / "0-unmarked").mkdir()
    assert folders.newest_first(home) == ["a", "c", "b", "0-unmarked"]


def test_a_file_that_goes_while_a_folder_is_measured_counts_as_nothing(tmp_path, monkeypatch):
    (tmp_path / "stays").write_bytes(b"\0" * 7)
    (tmp_path / "goes").write_bytes(b"\0" * 5)
    real = os.lstat

    def lstat(path, *args, **options):
        if str(path).endswith("goes"):
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
        return real(path, *args, **options)

    monkeypatch.setattr(os, "lstat", lstat)
    assert folders.folder_size(tmp_path) == 7


def test_what_blocks_the_removal_of_a_folder_that_is_gone_is_said(tmp_path):
    gone = tmp_path / "gone"
    assert folders.what_blocks_removal(gone) == f"No such file or directory: {gone}"
    assert folders.what_blocks_removal(tmp_path) is None


def test_a_run_keeps_its_documents_as_indented_json(tmp_path):
    folders.keep_json(tmp_path, results={"outcome": ["duplicate"]}, before={})
    said = (tmp_path / "results.json").read_text()
    assert said == json.dumps({"outcome": ["duplicate"]}, indent=2)
    assert (tmp_path / "before.json").read_text() == "{}"


@pytest.mark.timeout(30)
def test_a_marker_that_is_not_a_plain_file_is_said_and_a_fifo_folder_never_blocks(tmpdir_env):
    home = lk.runs_home()
    fifo_marker = home / "fifo-marker"
    fifo_marker.mkdir()
    os.mkfifo(fifo_marker / MARKER)
    with pytest.raises(OSError) as raised:
        folders.marker_of(fifo_marker)
    error = raised.value
    assert (error.errno, error.strerror) == (errno.EINVAL, "the marker is not a plain file")
    assert error.filename == str(fifo_marker / MARKER)
    os.mkfifo(home / "fifo-folder")  # a FIFO named like a run folder: opened, it would block
    (home / "unmarked").mkdir()
    assert folders.marker_of(home / "unmarked") is None
    assert sorted(lk.clean_runs().not_ours) == ["fifo-folder", "fifo-marker", "unmarked"]


def test_an_output_folder_is_made_without_its_parents_or_one_line_says_why(tmp_path, monkeypatch):
    """Only the last folder of `out` is made: a typo above it ("/tmp/runz/x") is refused, not
    made into a tree of folders nobody asked for."""
    made = new_run_dir(tmp_path / "out")
    assert made == (tmp_path / "out").resolve() and made.is_dir()
    nested = tmp_path / "a" / "b" / "out"
    with pytest.raises(lk.LabError) as raised:
        new_run_dir(nested)
    assert str(raised.value) == (
        f"cannot make the output folder {nested}: the folder {tmp_path / 'a' / 'b'} is not"
        " there; make it first (labkit makes the last folder of a path only)"
    )
    assert not (tmp_path / "a").exists()
    raced = tmp_path / "raced"
    monkeypatch.setattr(folders, "check_run_dir", lambda out, prefix, deepest: raced.mkdir())
    with pytest.raises(lk.LabError) as raised:
        new_run_dir(raced)  # another process made it between the check and the mkdir
    assert str(raised.value) == f"output folder {raced} already exists; name a new one"
    assert (raised.value.code, raised.value.fields) == ("exists", {"path": str(raced)})
    (tmp_path / "file").write_text("")
    out = tmp_path / "file" / "out"
    monkeypatch.setattr(folders, "check_run_dir", lambda out, prefix, deepest: None)
    with pytest.raises(lk.LabError) as raised:
        new_run_dir(out)
    said = f"cannot make the output folder {out}: Not a directory ({tmp_path / 'file'} is a file)"
    assert str(raised.value) == said
    with pytest.raises(lk.LabError) as raised:
        new_run_dir(nested)  # its parent went between the check and the mkdir
    said = f"cannot make the output folder {nested}: No such file or directory"
    assert str(raised.value) == said and not (tmp_path / "a").exists()


def test_a_full_home_or_an_unmakeable_one_is_one_line_naming_it(tmpdir_env, monkeypatch):
    def full(*args, **options):
        raise OSError(errno.ENOSPC, "No space left on device")

    home = home_in(tmpdir_env)
    with monkeypatch.context() as patch, pytest.raises(lk.LabError) as raised:
        patch.setattr(os, "mkdir", full)
        lk.runs_home()
    assert str(raised.value) == f"cannot make the runs home {home}: No space left on device"
    lk.runs_home()
    monkeypatch.setattr(tempfile, "mkdtemp", full)
    with pytest.raises(lk.LabError) as raised:
        new_run_dir(None)
    assert str(raised.value) == f"cannot make a run folder in {home}: No space left on device"


def test_a_home_that_is_a_link_or_a_file_is_named_in_one_exact_line(tmp_path, tmpdir_env):
    home = home_in(tmpdir_env)
    home.symlink_to(tmp_path)
    remedy = "remove it, or set TMPDIR to a folder of yours"
    with pytest.raises(lk.LabError) as raised:
        lk.runs_home()
    said = f"labkit will not use the runs home {home}: it is a symbolic link; {remedy}"
    assert str(raised.value) == said
    home.unlink()
    home.write_text("")
    with pytest.raises(lk.LabError) as raised:
        lk.runs_home()
    assert (
        str(raised.value)
        == f"labkit will not use the runs home {home}: it is not a folder; {remedy}"
    )
    with pytest.raises(lk.LabError) as raised:
        lk.runs_home(room_for=5)
    said = "room_for must be the name of a folder to be made there (a str), not 5"
    assert str(raised.value) == said


def test_the_temp_directory_is_tmpdir_else_pythons_else_tmp_and_named_when_unusable(
    tmp_path, monkeypatch
):
    monkeypatch.delenv("TMPDIR")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert folders.temp_dir() == tmp_path
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert folders.temp_dir() == Path("/tmp")
    missing = tmp_path / "missing"
    monkeypatch.setattr(tempfile, "tempdir", str(missing))
    with pytest.raises(lk.LabError) as raised:
        folders.temp_dir()
    remedy = "set TMPDIR to a folder of yours"
    said = f"the temp directory {missing}: No such file or directory; {remedy}"
    assert str(raised.value) == said
    monkeypatch.setenv("TMPDIR", str(missing))
    with pytest.raises(lk.LabError) as raised:
        folders.temp_dir()
    assert str(raised.value) == f"TMPDIR {missing}: No such file or directory; {remedy}"


def test_the_size_to_keep_is_megabytes_up_to_a_petabyte(monkeypatch):
    monkeypatch.setenv("LABKIT_RUNS_KEEP_MB", "2")
    assert folders.runs_keep_bytes() == 2_000_000
    monkeypatch.setenv("LABKIT_RUNS_KEEP_MB", str(folders.KEEP_MB_MAX))
    assert folders.runs_keep_bytes() == folders.KEEP_MB_MAX * 1_000_000
    monkeypatch.setenv("LABKIT_RUNS_KEEP_MB", "lots")
    with pytest.raises(lk.LabError) as raised:
        folders.runs_keep_bytes()
    assert str(raised.value) == (
        f"LABKIT_RUNS_KEEP_MB='lots': give a whole number of megabytes from 0 to "
        f"{folders.KEEP_MB_MAX} (default 200; 0 keeps every run)"
    )


def test_pruning_waits_until_exactly_prune_every_seconds_have_passed(pruning):
    clock = [1_000.0]
    pruning.setattr(cleaning, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    pruning.setenv("LABKIT_RUNS_KEEP_MB", "1")
    assert folders.prune_runs() is not None
    clock[0] += folders.PRUNE_EVERY - 0.5
    assert folders.prune_runs() is None
    clock[0] = 1_000.0 + folders.PRUNE_EVERY
    assert folders.prune_runs() is not None


# --- what the 2026-12-05 run of home.py found unguarded: a refusal's code and fields, from
# which the command line says it in the reader's language (English reads the same either way)


def test_a_run_folder_the_home_has_no_room_for_is_said_as_one(tmpdir_env, monkeypatch, chinese):
    def disk_full(**_):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(folders.tempfile, "mkdtemp", disk_full)
    with pytest.raises(lk.LabError) as refused:
        new_run_dir(None)
    home = home_in(tmpdir_env)
    fields = {"what": "a run folder in", "path": str(home), "reason": "No space left on device"}
    assert (refused.value.code, refused.value.fields) == ("cannot_make_in", fields)
    zh = say("cli.error.cannot_make_in", path=str(home), reason="No space left on device")
    assert error_line(refused.value) == zh and str(home) in zh


def test_an_output_folder_behind_a_file_is_said_as_one_that_cannot_be_made(tmp_path, chinese):
    (tmp_path / "a-file").write_text("mine")
    out = tmp_path / "a-file" / "run"
    with pytest.raises(lk.LabError) as refused:
        new_run_dir(out)
    reason = f"Not a directory ({tmp_path / 'a-file'} is a file)"
    fields = {"what": "the output folder", "path": str(out), "reason": reason}
    assert (refused.value.code, refused.value.fields) == ("cannot_make", fields)
    assert str(out) in error_line(refused.value)


def test_an_output_folder_too_deep_says_how_long_it_is(tmp_path, chinese):
    out = tmp_path / ("deep/" * 100)
    length = len(str(out.resolve()))
    with pytest.raises(lk.LabError) as refused:
        new_run_dir(out)
    fields = {"what": "the output folder", "path": str(out), "length": length, "most": RUN_DIR_MAX}
    assert (refused.value.code, refused.value.fields) == ("too_long", fields)
    assert f"a run folder there has {length} characters" in str(refused.value)
    assert f"{length}" in error_line(refused.value)


def test_an_output_folder_that_exists_is_said_as_one(tmp_path, chinese):
    out = tmp_path / "mine"
    out.mkdir()
    with pytest.raises(lk.LabError) as refused:
        new_run_dir(out)
    assert (refused.value.code, refused.value.fields) == ("exists", {"path": str(out)})
    assert error_line(refused.value) == say("cli.error.exists", path=str(out))
    assert str(out) in error_line(refused.value)


def test_a_temp_directory_too_deep_for_a_run_folder_is_said_as_one(tmp_path, monkeypatch, chinese):
    deep = long_folder(tmp_path, 460)
    monkeypatch.setenv("TMPDIR", str(deep))
    with pytest.raises(lk.LabError) as refused:
        new_run_dir(None)
    length = len(str(deep / f"labkit-runs-{os.getuid()}" / ("commit-window-" + "x" * 8)))
    fields = {"what": "the temp directory", "path": str(deep), "length": length}
    fields["most"] = RUN_DIR_MAX
    assert (refused.value.code, refused.value.fields) == ("too_long", fields)
    assert str(refused.value).startswith(f"the temp directory {deep} is too long for SQLite")
    assert list(deep.iterdir()) == []


def test_a_bad_size_to_keep_is_said_with_what_it_was_and_what_it_may_be(monkeypatch, chinese):
    monkeypatch.setenv("LABKIT_RUNS_KEEP_MB", "lots")
    with pytest.raises(lk.LabError) as refused:
        folders.runs_keep_bytes()
    fields = {"variable": "LABKIT_RUNS_KEEP_MB", "value": "lots", "most": 10**9, "default": 200}
    assert (refused.value.code, refused.value.fields) == ("keep_mb", fields)
    assert error_line(refused.value) == say("cli.error.keep_mb", **fields)


@pytest.mark.parametrize(
    ("entry", "theirs", "code"),
    [
        ("link", False, "home_link"),
        ("link", True, "home_link_theirs"),
        ("file", False, "home_not_folder"),
        ("file", True, "home_not_folder_theirs"),
        ("folder", True, "home_not_yours"),
        ("writable", False, "home_writable"),
    ],
)
def test_each_runs_home_refused_has_its_own_code(tmpdir_env, chinese, entry, theirs, code):
    """Another user's entry has a code of its own: its remedy is TMPDIR alone, never "remove
    it" (the Chinese line is said from the code; English reads the same for the first two)."""
    if theirs and not AS_ROOT:
        pytest.skip("only root can give an entry to another user")
    home = home_in(tmpdir_env)
    if entry == "link":
        (tmpdir_env / "elsewhere").mkdir()
        home.symlink_to(tmpdir_env / "elsewhere")
    elif entry == "file":
        home.write_text("")
    else:
        home.mkdir(mode=0o700)
        home.chmod(0o770 if entry == "writable" else 0o700)
    if theirs:
        os.lchown(home, NOBODY, NOBODY)
    info = os.lstat(home)
    with pytest.raises(lk.LabError) as refused:
        lk.runs_home()
    fields = {"home": str(home), "owner": info.st_uid, "mode": f"{stat.S_IMODE(info.st_mode):o}"}
    assert (refused.value.code, refused.value.fields) == (code, fields)
    assert error_line(refused.value) == say(f"cli.error.{code}", **fields)
    assert ("remove it" in str(refused.value)) is not theirs


@pytest.mark.parametrize("problem", ["missing", "file"])
def test_an_unusable_tmpdir_is_said_by_its_code_and_in_english(tmp_path, monkeypatch, problem):
    """The command line says it from the code; a notebook's call shows the English text."""
    bad = tmp_path / "bad"
    if problem == "file":
        bad.write_text("")
    monkeypatch.setenv("TMPDIR", str(bad))
    with pytest.raises(lk.LabError) as refused:
        folders.temp_dir()
    remedy = "set TMPDIR to a folder of yours"
    if problem == "file":
        fields = {"what": "TMPDIR", "path": str(bad)}
        expected = ("temp_not_folder", fields, f"TMPDIR {bad} is not a folder; {remedy}")
    else:
        fields = {"what": "TMPDIR", "path": str(bad), "reason": "No such file or directory"}
        said = f"TMPDIR {bad}: No such file or directory; {remedy}"
        expected = ("temp_unusable", fields, said)
    assert (refused.value.code, refused.value.fields, str(refused.value)) == expected


def test_a_run_folder_that_cannot_be_marked_is_said_as_one_that_cannot_be_made(tmp_path):
    gone = tmp_path / "gone"  # its marker cannot be opened
    with pytest.raises(lk.LabError) as refused:
        folders.claim(gone)
    reason = "No such file or directory"
    fields = {"what": "a run folder in", "path": str(tmp_path), "reason": reason}
    assert (refused.value.code, refused.value.fields) == ("cannot_make_in", fields)
    assert str(refused.value) == f"cannot make a run folder in {tmp_path}: {reason}"
    assert gone not in folders._in_use and list(tmp_path.iterdir()) == []
