"""The workshop hub, for real: JupyterHub on 127.0.0.1 with two participants, each a system
user of their own, logged in through the REST API, a lesson's crash run in each one's kernel,
and neither able to reach the other's files, sockets, Postgres or ticket service."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from labkit.bench.errors import LabError
from labkit.bench.postgres.process_table import process_started
from labkit.hub import participants, passwords, probe
from labkit.hub.client import Participant, Refused, call
from labkit.hub.kernel import RemoteKernel
from labkit.hub.room_postgres import RoomPostgres
from labkit.hub.settings import Settings, free_ports
from labkit.hub.start import start, stop
from tests.conftest import NOBODY, python_as
from tests.hubs import hub_of, hub_settings, processes_of

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the hub makes system users: root only"),
    pytest.mark.skipif(not shutil.which("npm"), reason="the hub's proxy comes from npm"),
    pytest.mark.timeout(900),
]

LESSON_1_CRASH = """
import json, os
from ipykernel.connect import get_connection_info
from labkit.studies.commit_window.runs import run
result = run("effect_first", "effect")
print(json.dumps({"outcome": result.outcome, "run_dir": str(result.run_dir), "uid": os.getuid(),
                  "lessons": sorted(os.listdir(os.path.expanduser("~/notebooks"))),
                  "kernel": json.loads(get_connection_info()),
                  "server": open(f"/proc/{os.getppid()}/cmdline").read().split(chr(0))}))
"""


def last_json(text: str) -> dict:
    return json.loads(text.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def hub():
    """A hub of two participants (users made for it, removed after with all they left)."""
    left: dict[int, list[int]] = {}

    def their_processes_end(_: Settings) -> None:
        deadline = time.monotonic() + 30
        while any(map(participants.processes_of, uids)) and time.monotonic() < deadline:
            time.sleep(0.2)
        left.update({uid: participants.processes_of(uid) for uid in uids})

    prefix = f"hubt{os.getpid() % 100000}-"
    names, uids = participants.names(2, prefix), []
    try:
        with hub_of(prefix, 2, their_processes_end) as settings:
            uids += [pwd.getpwnam(n).pw_uid for n in names]
            yield settings
    finally:
        assert not any(n in {u.pw_name for u in pwd.getpwall()} for n in names)
        assert not any(os.path.exists(f"/tmp/labkit-runs-{uid}") for uid in uids)
    assert left == {uid: [] for uid in uids}  # the hub stopped everything it started


def test_the_rest_api_lets_in_the_workshop_password_only(hub):
    someone = Participant(hub.url, hub.participants[0])
    with pytest.raises(Refused) as refused:
        someone.log_in("not-the-password")
    assert refused.value.status == 403
    stranger = Participant(hub.url, "not-a-participant")
    with pytest.raises(Refused):
        stranger.log_in(passwords.participants_password(hub.folder))
    someone.log_in(passwords.participants_password(hub.folder))
    assert someone.me()["name"] == hub.participants[0] and not someone.me()["admin"]


def test_the_instructor_is_admin_with_their_own_password(hub):
    instructor = Participant(hub.url, hub.instructor)
    with pytest.raises(Refused):
        instructor.log_in(passwords.participants_password(hub.folder))
    instructor.log_in(passwords.instructor_password(hub.folder))
    assert instructor.me()["admin"]
    users = call("GET", f"{hub.url}/hub/api/users", token=instructor.token)[1]
    names = {user["name"] for user in users}
    assert set(hub.participants) <= names
    for path in (passwords.PARTICIPANTS, passwords.INSTRUCTOR, passwords.PROXY):
        assert oct((hub.folder / path).stat().st_mode & 0o777) == oct(0o600)


def test_each_runs_lesson_1s_crash_in_their_own_kernel_and_cannot_reach_the_other(hub):
    password = passwords.participants_password(hub.folder)
    people = [Participant(hub.url, name) for name in hub.participants]
    for person in people:
        person.log_in(password)
    with ThreadPoolExecutor(len(people)) as pool:
        list(pool.map(Participant.start_server, people))
    kernels = [RemoteKernel(p.server_url, p.token) for p in people]
    try:
        crashes = []
        for kernel in kernels:
            ran = kernel.run(LESSON_1_CRASH)
            assert ran.error is None, ran.text
            crashes.append(last_json(ran.text))
        for person, crash in zip(people, crashes, strict=True):
            uid = pwd.getpwnam(person.name).pw_uid
            assert crash["uid"] == uid
            assert crash["outcome"] == "duplicate"  # effect-first killed at effect: 2 receipts
            assert crash["run_dir"].startswith(f"/tmp/labkit-runs-{uid}/")
            assert "01_the_commit_window.ipynb" in crash["lessons"]
            assert crash["server"][1:3] == ["-m", "labkit.hub.lean_server"]  # the lean server
            kernel = crash["kernel"]  # its sockets in the participant's home, not on 127.0.0.1
            assert kernel["transport"] == "ipc", kernel
            assert kernel["ip"].startswith(f"{pwd.getpwnam(person.name).pw_dir}/"), kernel
        owner, other = kernels
        held = owner.run("from labkit.hub import probe\nprint(probe.hold())")
        assert held.error is None, held.text
        where = last_json(held.text)
        assert where["runs_home"] == f"/tmp/labkit-runs-{pwd.getpwnam(people[0].name).pw_uid}"
        assert where["sockets"], "the owner's Postgres has a socket in their runs home"
        tried = other.run(
            f"from labkit.hub import probe\nprint(probe.reach({json.dumps(where)!r}))"
        )
        assert tried.error is None, tried.text
        doors = last_json(tried.text)
        assert probe.REACHED not in doors.values(), doors
        assert doors["runs_home"].startswith("PermissionError")
        assert doors["home"].startswith("PermissionError")
        assert doors["service_secret"].startswith("PermissionError")
        assert "Permission denied" in doors["postgres_socket"]
        assert "refused" in doors["postgres_tcp"].lower()
        assert doors["ticket_service"] == "Refused: HTTP 403"
        mine = owner.run(f"from labkit.hub import probe\nprint(probe.reach({json.dumps(where)!r}))")
        assert last_json(mine.text)["runs_home"] == probe.REACHED  # the doors open for their owner
        owner.run("probe.release()")
    finally:
        for kernel in kernels:
            kernel.close()
        for person in people:
            person.stop_server()


# What a process of `nobody`'s tries on the room and the culler: the room's folder, and a
# signal to each service (0 only asks whether it could be sent)
NOBODY_REACHES = """
    import json, os, sys
    said = {}
    for name, act in (("room_folder", lambda: os.listdir(sys.argv[1])),
                      *((pid, lambda pid=pid: os.kill(int(pid), 0)) for pid in sys.argv[2:])):
        try:
            act()
            said[name] = "reached"
        except OSError as error:
            said[name] = type(error).__name__
    print(json.dumps(said))
"""


def service_pids(settings: Settings) -> dict[str, int]:
    """This hub's services that run now (the room, the culler): their pids, by name."""
    parts = processes_of(settings)
    return {part: pid for pid, part in parts.items() if part not in ("keeper", "hub", "proxy")}


def uid_of(pid: int) -> int:
    """A process's effective uid, as the system says it."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("\nUid:")[1].split()[1])


def test_the_room_and_the_culler_run_as_the_labs_own_user_out_of_nobodys_reach(hub):
    account = pwd.getpwnam("labkit-hub")  # the lab's own, used for nothing else
    pids = service_pids(hub)
    assert pids.keys() == {"room", "idle-culler"}
    assert {name: uid_of(pid) for name, pid in pids.items()} == dict.fromkeys(pids, account.pw_uid)
    assert hub.room_folder.stat().st_uid == account.pw_uid
    nobody = python_as(NOBODY, NOBODY_REACHES, str(hub.room_folder), *map(str, pids.values()))
    out, err = nobody.communicate(timeout=60)
    assert last_json(out) == dict.fromkeys(
        ["room_folder", *map(str, pids.values())], "PermissionError"
    ), err


@pytest.mark.parametrize(
    ("arguments", "line"),
    [
        (["--participants", "0"], "hub: --participants must be 1 to 300, not 0"),
        (["--prefix", "Bad Name"], "hub: --prefix must be lowercase letters"),
        (["--prefix", "nobody-made-these-"], "hub: no participants yet: make them with"),
    ],
)
def test_bad_input_is_one_line_and_status_2(arguments, line):
    done = subprocess.run(
        [sys.executable, "-m", "labkit.hub", *arguments], capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(line) and len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize("language", ["en", "zh"])
def test_without_root_it_says_what_to_run_in_the_readers_language(language):
    from labkit.language import catalogue

    done = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
         sys.executable, "-m", "labkit.hub", "--participants", "2"],
        capture_output=True, text=True, cwd="/",
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1]),
             "LABKIT_LANGUAGE": language},
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == f"hub: {catalogue(language)['cli.error.hub_needs_root']}\n"
    assert ("只有 root" in done.stderr) == (language == "zh")


ROOM_ATTEMPTS = """
import json, sys, psycopg
from urllib.parse import urlsplit
mine, theirs = sys.argv[1], sys.argv[2]
said = {}
def attempt(name, url):
    try:
        psycopg.connect(url, connect_timeout=5).close()
        said[name] = "connected"
    except psycopg.Error as error:
        said[name] = " ".join(str(error).split())
attempt("mine", mine)
attempt("their_database", urlsplit(mine)._replace(path=urlsplit(theirs).path).geturl())
attempt("the_admin_database", urlsplit(mine)._replace(path="/postgres").geturl())
attempt("as_them", theirs)
with psycopg.connect(mine, autocommit=True) as db:
    db.execute("CREATE SCHEMA labkit_000000000000")  # what each of a lesson's runs makes
    said["powers"] = db.execute(
        "SELECT rolsuper OR rolcreatedb OR rolcreaterole OR rolreplication OR rolbypassrls"
        " FROM pg_roles WHERE rolname = current_user"
    ).fetchone()[0]
print(json.dumps(said))
"""


def test_the_rooms_postgres_gives_each_a_database_of_their_own_and_nothing_more(hub):
    room = RoomPostgres(free_ports(1)[0]).start()
    try:
        first, second = hub.participants
        urls = {name: room.admit(name) for name in hub.participants}
        done = subprocess.run(
            [*participants.as_user(first), sys.executable, "-c", ROOM_ATTEMPTS,
             urls[first], urls[second]],
            capture_output=True, text=True, cwd="/", timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        said = last_json(done.stdout)
        assert said["mine"] == "connected" and said["powers"] is False
        assert f'permission denied for database "{second}"' in said["their_database"]
        assert 'permission denied for database "postgres"' in said["the_admin_database"]
        assert "no password supplied" in said["as_them"]  # their password file is theirs
        passfile = Path(pwd.getpwnam(first).pw_dir) / ".labkit-room-pgpass"
        info = passfile.stat()
        assert (info.st_uid, oct(info.st_mode & 0o777)) == (pwd.getpwnam(first).pw_uid, "0o600")
        assert "127.0.0.1" in urls[first] and "password" not in urls[first].split("?")[0]
        # lesson 7's guard cell, as the participant, reads the room's server and starts none
        guard = "import json; from labkit.studies.postgres.runs import server_guard as g\n"
        done = subprocess.run(
            [*participants.as_user(first), sys.executable, "-c", guard + "print(json.dumps(g()))"],
            capture_output=True, text=True, cwd="/", timeout=120,
            env={**os.environ, "HOME": pwd.getpwnam(first).pw_dir,
                 "LABKIT_POSTGRES_URL": urls[first], "PYTHONPATH": str(Path(__file__).parents[1])},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert last_json(done.stdout) == {
            "network": "127.0.0.1", "socket_mode": "0700", "auth": ["scram-sha-256"],
            "runs_as": "labkit-postgres", "you": first, "password_file_mode": "0600",
            "without_password": "no password supplied",
        }  # fmt: skip
        runs = Path(f"/tmp/labkit-runs-{pwd.getpwnam(first).pw_uid}")
        assert not list(runs.glob("postgres-*")) if runs.exists() else True  # no server of theirs
    finally:
        room.stop()


@contextmanager
def every_process_of(settings: Settings) -> Iterator[dict[int, tuple[str, str | None]]]:
    """Each process of the hub seen while the block runs (looked for every 20 ms), by pid: its
    part and when it started, which tells it from a later process given the same pid."""
    seen: dict[int, tuple[str, str | None]] = {}
    over = threading.Event()

    def look() -> None:  # a part as last seen: between its fork and its exec, the proxy is the hub
        while True:
            seen.update(with_their_start(settings))
            if over.wait(0.02):
                return

    watcher = threading.Thread(target=look)
    watcher.start()
    try:
        yield seen
    finally:
        over.set()
        watcher.join()


def with_their_start(settings: Settings) -> dict[int, tuple[str, str | None]]:
    """The hub's processes that run now, by pid: each one's part, and when it started."""
    return {pid: (part, process_started(pid)) for pid, part in processes_of(settings).items()}


def left_of(seen: dict[int, tuple[str, str | None]]) -> dict[int, str]:
    """Those of the processes `seen` that are still there, running or never reaped (one gone
    as it was looked at has no start)."""
    return {
        pid: part
        for pid, (part, started) in seen.items()
        if started is not None and process_started(pid) == started
    }


def ended(left: dict[int, str]) -> None:
    """What a failed test found left, ended: no test leaves a process behind."""
    for pid in left:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_a_hub_whose_start_fails_leaves_none_of_its_processes():
    """The room's port taken, the room cannot listen and the hub ends during its start, its
    proxy and its culler up by then, each in a session of its own: not one is left."""
    with hub_settings("hubfail-", ["hubfail-1"]) as settings, socket.socket() as taken:
        taken.bind(("127.0.0.1", settings.room_port))
        with every_process_of(settings) as seen, pytest.raises(LabError) as failed:
            start(settings)
        try:
            assert failed.value.code == "hub_ended"
            assert "Service room exited" in (settings.folder / "hub.log").read_text()
            assert {"hub", "proxy", "idle-culler"} <= {part for part, _ in seen.values()}
            assert left_of(seen) == {}
        finally:
            ended(left_of(seen))


def test_a_hub_that_will_not_stop_is_ended_with_all_it_started():
    """A hub frozen (SIGSTOP) hears no SIGTERM: once the stop's grace is over, it is killed,
    and its proxy, room and culler, each in a session of its own, end with it."""
    with hub_settings("hubstop-", ["hubstop-1"]) as settings:
        process = start(settings)
        try:
            while not {"room", "idle-culler"} <= set(processes_of(settings).values()):
                time.sleep(0.05)
            seen = with_their_start(settings)
            [hub] = [pid for pid, (part, _) in seen.items() if part == "hub"]
            os.kill(hub, signal.SIGSTOP)
        finally:
            stop(process, grace=2)
    try:
        assert {"hub", "proxy", "room", "idle-culler"} <= {part for part, _ in seen.values()}
        assert left_of(seen) == {}
    finally:
        ended(left_of(seen))


def test_a_hub_whose_starter_is_killed_ends_with_all_it_started():
    """`tasks.py hub` killed (SIGKILL, no `stop`): its keeper hears its end, stops the hub,
    and ends what the hub started; not one process is left."""
    with hub_settings("hubgone-", ["hubgone-1"]) as settings:
        starter = subprocess.Popen(
            [sys.executable, "-c", STARTS_AND_WAITS, str(settings.save())],
            stdout=subprocess.PIPE,
            text=True,
        )
        seen = {}
        try:
            assert starter.stdout.readline() == "up\n"
            while not {"room", "idle-culler"} <= set(processes_of(settings).values()):
                time.sleep(0.05)
            seen = with_their_start(settings)
            starter.kill()
            starter.wait()
            deadline = time.monotonic() + 60
            while left_of(seen) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert {"keeper", "hub", "proxy", "room", "idle-culler"} <= {
                part for part, _ in seen.values()
            }
            assert left_of(seen) == {}
        finally:
            starter.kill()
            ended(left_of(seen))


STARTS_AND_WAITS = """
import sys, time
from labkit.hub.settings import load
from labkit.hub.start import start
start(load(sys.argv[1]))
print("up", flush=True)
time.sleep(3600)
"""
