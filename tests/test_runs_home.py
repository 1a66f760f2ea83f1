"""The runs home in a shared temp directory: used only if it is safely the caller's; `clean`
follows no link, removes only labkit's own folders and never one whose run goes on; a bad
place to write is one clear line (status 2 in the CLI), with nothing written."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import labkit as lk
from labkit.bench.folders import MARKER, RUN_DIR_MAX, new_run_dir, release_run_dir
from labkit.studies.commit_window.stepping import StepSession
from tests.conftest import AS_ROOT, NOBODY, SEEN_AS, labkit_as_nobody


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
    cleaning = lk.clean_runs()
    assert sorted(cleaning.removed) == sorted([first.run_dir.name, swept[0].run_dir.parent.name])
    assert cleaning.in_use == cleaning.not_ours == []


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
    monkeypatch.setattr("labkit.bench.folders._pruned_at", None)
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


def test_pruning_looks_at_most_once_in_a_while_and_can_be_turned_off(pruning):
    pruning.setenv("LABKIT_RUNS_KEEP_MB", "1")
    assert lk.bench.folders.prune_runs() is not None
    first = finished_run(2, 1)
    assert lk.bench.folders.prune_runs() is None and first.exists()  # too soon: a sweep's runs
    pruning.setattr("labkit.bench.folders._pruned_at", None)
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
