"""Lesson 7's Postgres on a shared machine, tried by another local user: the lab's own server
lets nobody else in and keeps no root power; `clean --postgres-url` drops only what is
provably this user's and over, whatever names and comments others put on a shared server."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from psycopg import sql

from labkit.bench import postgres
from labkit.bench.errors import LabError
from labkit.bench.folders import new_run_dir, release_run_dir
from labkit.bench.postgres.local_server import forget_template, template_data
from labkit.bench.system_accounts import system_account
from tests.conftest import AS_ROOT, NOBODY, STRANGER, passable_folder, python_as

pytestmark = pytest.mark.skipif(not AS_ROOT, reason="another user is played by root's setpriv")

# What a stranger tries: the lab's URL as it is, and the same server over TCP without a
# password (what `initdb -A trust` on 127.0.0.1 let in); each attempt's error, or "connected".
STRANGER_CONNECTS = """
    import json, os, psycopg
    from urllib.parse import parse_qs, urlsplit
    url = os.environ["URL"]
    port = parse_qs(urlsplit(url).query).get("port", ["5432"])[0]
    said = {}
    for name, target in (("socket", url), ("tcp", f"postgresql://postgres@127.0.0.1:{port}/postgres")):
        try:
            psycopg.connect(target, connect_timeout=5).close()
            said[name] = "connected"
        except psycopg.Error as error:
            said[name] = str(error)
    print(json.dumps(said))
"""


@pytest.fixture
def deep_server(passable_tmp_path):
    """The lab's own server in a folder whose path is too long for a socket there (a TMPDIR
    of about 60 characters was enough): where the lab once fell back to 127.0.0.1 and trust."""
    folder = passable_tmp_path / ("x" * 90)
    folder.mkdir()
    server = postgres.LocalServer(folder)
    server.start()
    yield server
    server.stop()


def test_another_user_can_connect_neither_over_the_socket_nor_over_127_0_0_1(deep_server):
    stranger = python_as(STRANGER, STRANGER_CONNECTS, URL=deep_server.url)
    out, err = stranger.communicate(timeout=60)
    said = json.loads(out.splitlines()[-1]) if out else {}
    assert said.keys() == {"socket", "tcp"}, err
    assert "Permission denied" in said["socket"]  # its folder is the server's alone
    assert "Connection refused" in said["tcp"]  # nothing listens on the network


def test_the_lab_itself_gets_in_only_with_the_servers_own_password(deep_server):
    hba = (deep_server.data / "pg_hba.conf").read_text()
    methods = {line.split()[-1] for line in hba.splitlines() if line and line[0] != "#"}
    assert methods == {"scram-sha-256"}
    without = deep_server.url.split("&passfile=")[0]
    with pytest.raises(LabError, match="no password supplied"):
        postgres.connect(without)
    password_file = Path(parse_qs(urlsplit(deep_server.url).query)["passfile"][0])
    assert password_file.parent == deep_server.folder
    assert oct(password_file.stat().st_mode & 0o777) == oct(0o600)
    assert password_file.read_text().split(":")[-1].strip() not in deep_server.url


def test_roots_server_runs_as_the_labs_own_user_and_has_no_power_over_roots_files(
    passable_tmp_path,
):
    server = postgres.LocalServer(passable_tmp_path / "pg")
    (passable_tmp_path / "pg").mkdir()
    server.start()
    written = Path(f"/tmp/labkit-test-{os.getpid()}-who")
    account = pwd.getpwnam("labkit-postgres")  # the lab's own, used for nothing else
    try:
        assert uids_of(server.pid) == [account.pw_uid] * 4  # real, effective, saved, fs
        assert (account.pw_dir, account.pw_shell) == ("/nonexistent", "/usr/sbin/nologin")
        conn = postgres.connect(server.url)
        # the program reads what COPY sends first: one that exits before COPY has written its
        # row breaks the pipe, and COPY fails ("could not close pipe", once in CI)
        program = f"cat > /dev/null; id -u > {written}"
        conn.execute(sql.SQL("COPY (SELECT 1) TO PROGRAM {}").format(program))
        assert written.stat().st_uid == account.pw_uid  # the program ran as it, not as root
        with pytest.raises(Exception, match="Permission denied"):
            conn.execute("SELECT pg_read_file('/etc/shadow')")
        assert (passable_tmp_path / "pg" / "data").stat().st_uid == account.pw_uid
    finally:
        written.unlink(missing_ok=True)
        server.stop()


def uids_of(pid: int) -> list[int]:
    """A process's real, effective, saved and filesystem uids, as the system says them."""
    status = Path(f"/proc/{pid}/status").read_text()
    return [int(uid) for uid in status.split("\nUid:")[1].split("\n")[0].split()]


# What a process of `nobody`'s tried on a server that ran as nobody: make every connection
# `trust`, have the postmaster (its -D shown by `ps`) read it again, and get in as superuser.
NOBODY_TAKES_OVER = """
    import os, signal, sys
    data, pid = sys.argv[1], int(sys.argv[2])
    try:
        with open(os.path.join(data, "pg_hba.conf"), "w") as hba:
            hba.write("local all all trust\\n")
        os.kill(pid, signal.SIGHUP)
        print("rewrote", flush=True)
    except OSError as error:
        print(type(error).__name__, flush=True)
"""


def test_a_process_of_nobodys_can_neither_rewrite_pg_hba_nor_get_in(passable_tmp_path):
    server = postgres.LocalServer(passable_tmp_path / "pg")
    (passable_tmp_path / "pg").mkdir()
    server.start()
    try:
        nobody = python_as(NOBODY, NOBODY_TAKES_OVER, str(server.data), str(server.pid))
        out, err = nobody.communicate(timeout=60)
        assert out.split() == ["PermissionError"], err
        time.sleep(0.5)  # a reload, had there been one, is done by now
        hba = (server.data / "pg_hba.conf").read_text()
        methods = {line.split()[-1] for line in hba.splitlines() if line and line[0] != "#"}
        assert methods == {"scram-sha-256"}
        with pytest.raises(LabError, match="no password supplied"):
            postgres.connect(server.url.split("&passfile=")[0])
    finally:
        server.stop()


def test_labkits_that_make_the_same_user_at_once_all_get_the_one_made(tmp_path):
    name = f"labkit-test{os.getpid()}"
    code = f"""
        import sys
        from concurrent.futures import ProcessPoolExecutor
        from labkit.bench.system_accounts import system_account
        with ProcessPoolExecutor(6) as pool:
            print(len(set(pool.map(system_account, ["{name}"] * 6))), pwd.getpwnam("{name}").pw_uid)
    """
    try:
        done = subprocess.run(
            [sys.executable, "-c", "import pwd\n" + textwrap.dedent(code)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.stdout.split()[0] == "1", done.stderr  # one user, seen alike by all six
        assert int(done.stdout.split()[1]) == pwd.getpwnam(name).pw_uid  # and it stayed
    finally:
        subprocess.run(["userdel", name], capture_output=True)


def test_a_user_that_cannot_be_made_is_one_line_that_says_how_to_make_it(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")  # no useradd, as on macOS
    with pytest.raises(LabError) as refused:
        system_account(f"labkit-test{os.getpid()}")
    said = str(refused.value)
    assert "No such file or directory" in said and "\n" not in said
    assert "useradd --system --user-group --no-create-home --home-dir /nonexistent" in said


# What the server's user does to the template while the crash runs copy it: swap a file for
# a link to one of root's and back, each for half a millisecond, until told to stop.
SWAPPER = """
    import os, select, sys, time
    target, secret, stage = sys.argv[1:]
    real = open(target).read()
    link, plain = os.path.join(stage, "link"), os.path.join(stage, "plain")
    print("swapping", flush=True)
    while not select.select([sys.stdin], [], [], 0)[0]:
        os.symlink(secret, link)
        os.rename(link, target)
        time.sleep(0.0005)
        with open(plain, "w") as file:
            file.write(real)
        os.rename(plain, target)
        time.sleep(0.0005)
"""


def test_the_servers_user_cannot_get_a_file_of_roots_copied_with_the_template(
    passable_tmp_path,
):
    template = template_data()
    token = secrets.token_hex(16)
    secret = passable_tmp_path / "secret"
    secret.write_text(token)
    secret.chmod(0o600)  # root's alone
    stage = passable_tmp_path / "stage"
    stage.mkdir()
    account = pwd.getpwnam("labkit-postgres")
    os.chown(stage, account.pw_uid, account.pw_gid)
    # the file copied last: the longest while between the folder's listing and its copy
    target = [entry for entry in os.scandir(template) if entry.is_file()][-1].path
    swapper = python_as(account.pw_uid, SWAPPER, target, str(secret), str(stage))
    leaked = []
    try:
        assert swapper.stdout.readline() == "swapping\n", swapper.stderr.read()
        for n in range(20):
            server = postgres.LocalServer(passable_tmp_path / f"copy{n}", copied=True)
            server.folder.mkdir()
            with contextlib.suppress(LabError, OSError, shutil.Error):  # the swaps may break it
                server.copy_template()
            copied = server.data / os.path.basename(target)
            if copied.exists() and not copied.is_symlink() and token in copied.read_text():
                leaked.append(n)  # a link copied as a link hands its user nothing
    finally:
        swapper.stdin.close()
        swapper.wait(timeout=30)
        forget_template()  # the next test's template is a new one
    assert leaked == []


def stranger_home(tmp_path: Path) -> Path:
    """A TMPDIR of the stranger's own."""
    home = passable_folder("stranger-", os.environ["TMPDIR"])
    os.chown(home, STRANGER, STRANGER)
    return home


@pytest.fixture
def strangers_server(passable_tmp_path):
    """A server the stranger started with labkit (as an ordinary user), which both of us may
    use: a reader's server shared by two users. Its URL, and the stranger's TMPDIR."""
    home = stranger_home(passable_tmp_path)
    serving = python_as(
        STRANGER,
        """
        import sys
        from labkit.bench.postgres import shared_url
        print(shared_url(), flush=True)
        sys.stdin.read()
        """,
        TMPDIR=str(home),
    )
    url = serving.stdout.readline().strip()
    assert url.startswith("postgresql://"), serving.stderr.read()
    yield url, home
    serving.stdin.close()
    serving.wait(timeout=60)
    shutil.rmtree(home, ignore_errors=True)


def comment(conn, name: str, note: object) -> None:
    conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
    text = note if isinstance(note, str) else json.dumps(note)
    conn.execute(sql.SQL("COMMENT ON SCHEMA {} IS {}").format(sql.Identifier(name), text))


def test_another_users_clean_drops_only_its_own_finished_schemas(strangers_server, tmp_path):
    url, home = strangers_server
    conn = postgres.connect(url)
    running = new_run_dir(None, prefix="pg-window-")  # root's run: going, and 0700
    roots = postgres.new_schema(url, running)
    host = os.uname().nodename
    strangers = {"host": host, "uid": STRANGER, "pid": 1, "started": None}
    unreadable = "labkit_" + "a" * 12  # the stranger's own, but its run folder is root's
    comment(conn, unreadable, {**strangers, "run_dir": str(running)})
    over = "labkit_" + "b" * 12  # the stranger's own, its folder gone: the one to drop
    comment(conn, over, {**strangers, "run_dir": str(home / "gone")})
    conn.execute("CREATE SCHEMA app_data")
    planted = "labkit_a CASCADE;DROP SCHEMA app_data CASCADE;--"
    comment(conn, planted, {**strangers, "run_dir": str(home / "gone")})
    for n, note in enumerate(['{"host":"vm"}', "[1]", {**strangers, "run_dir": None}, "x"]):
        comment(conn, f"labkit_{n:012x}", note)
    code = "import sys; from labkit.cli import main; sys.exit(main(sys.argv[1:]))"
    cleaning = python_as(STRANGER, code, "clean", "--postgres-url", url, TMPDIR=str(home))
    out, err = cleaning.communicate(timeout=120)
    release_run_dir(running)
    assert cleaning.returncode == 0 and err == "", err
    schemas = {row[0] for row in conn.execute("SELECT nspname FROM pg_namespace")}
    assert over not in schemas
    assert {roots, unreadable, planted, "app_data"} <= schemas
    assert "dropped 1 schemas" in out and f"user {os.getuid()}'s" in out
    assert "cannot be read" in out and "not the lab's" in out


def test_clean_with_a_bad_url_removes_nothing(tmp_path, capsys):
    from labkit.cli import main

    finished = new_run_dir(None, prefix="commit-window-")
    release_run_dir(finished)
    assert main(["clean", "--postgres-url", "nope"]) == 2
    assert finished.exists()
    assert main(["clean", "--postgres-url", "postgresql://["]) == 2
    assert finished.exists()
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 2
    assert all("must be a URL that starts with postgresql://" in line for line in errors)


def test_a_password_in_the_urls_query_is_never_shown_nor_saved(passable_tmp_path, own_password):
    url, password = own_password
    assert postgres.redacted("postgresql://me:pw@/db?host=/x&password=pw") == (
        "postgresql://me:***@/db?host=/x&password=***"
    )
    with_password = url.split("&passfile=")[0] + f"&password={password}"
    result_dir = passable_tmp_path / "run"
    from labkit.studies.postgres import experiment

    experiment.run_window("one_transaction", "committed", result_dir, with_password)
    assert password not in (result_dir / "postgres.json").read_text()
    wrong = with_password.replace(password, "hunter2") + "&port=1"
    with pytest.raises(LabError) as refused:
        postgres.connect(wrong)
    assert "hunter2" not in str(refused.value) and "password=***" in str(refused.value)


@pytest.fixture
def own_password(passable_tmp_path):
    server = postgres.LocalServer(passable_tmp_path / "pg")
    (passable_tmp_path / "pg").mkdir()
    url = server.start()
    yield url, server.password_file.read_text().split(":")[-1].strip()
    server.stop()


def test_python_as_runs_as_the_stranger():
    """The other-user cases are worth nothing if the stranger is root after all."""
    who = python_as(STRANGER, "import os; print(os.getuid(), os.getgroups())")
    out, _ = who.communicate(timeout=30)
    assert out.split() == [str(STRANGER), "[]"], sys.executable
