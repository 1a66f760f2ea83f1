"""labkit's own Postgres server: initdb into a run folder, `postgres` as a child of the process
that asked, a Unix socket only, scram-sha-256 with a password kept in a 0600 file; and the
initdb'd data folder the crash runs' servers copy (`copied=True`), made once per process.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import signal
import stat
import subprocess
import time
import urllib.parse
from pathlib import Path

from labkit.bench.errors import refusal
from labkit.bench.folders import (
    new_run_dir,
    outlive_call,
    release_run_dir,
    remove_run_dir,
    runs_home,
    temp_dir,
)
from labkit.bench.postgres.process_table import (
    STOP_TIMEOUT,
    children_of,
    end_group,
    is_zombie,
    kill_and_reap,
)
from labkit.bench.postgres.programs import (
    ENV_URL,
    INITDB_FLAGS,
    SERVER_USER,
    START_TIMEOUT,
    binaries,
    last_problem,
    launch,
    passable,
    private_file,
    server_account,
)
from labkit.bench.postgres.schemas import close_public

SOCKET_PATH_MAX = 107  # bytes in a Unix socket's path (sun_path, with its NUL)
PORT = "5432"  # the server's, unless its settings say another: its socket is named for it
SOCKET_RUN = "pg-socket-"  # a run folder for the socket, when the data folder's path is too long


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
        self._log_start = 0

    @property
    def pid(self) -> int | None:
        """The postmaster's pid while it runs."""
        return self.process.pid if self.process and self.process.poll() is None else None

    def start(self) -> str:
        """Initialise the data folder (once), start the server, wait until it is ready; return
        its URL. A failure stops whatever started and raises one LabError line."""
        self.launch()
        return self.wait_until_ready()

    def launch(self) -> None:
        """`start` up to the server's process, without waiting for it to be ready: several
        servers then start side by side (`wait_until_ready` on each)."""
        if not (self.data / "PG_VERSION").exists():
            if self.copied:
                self.copy_template()
            else:
                self.initdb()
        self.socket_folder = self.socket_folder or self.make_socket_folder()
        try:
            self._log_start = self.launch_server()
        except BaseException:
            self.forget_socket_folder()
            raise

    def wait_until_ready(self) -> str:
        """Wait until the launched server accepts connections (no role but a schema's owner may
        CREATE in public there: `close_public`); its URL."""
        try:
            self.wait_for_server(self._log_start)
        except BaseException:
            self.forget_socket_folder()
            raise
        self.url = postgres_url(str(self.socket_folder), self.password_file)
        close_public(self.url, self.settings.get("port"))  # whatever its version or past
        return self.url

    def initdb(self) -> None:
        """A new cluster whose superuser `postgres` has a new random password."""
        account = self.make_data_folder()
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
            raise refusal(
                "pg_setup_failed", folder=str(self.folder), problem=problem, variable=ENV_URL
            )

    def copy_template(self) -> None:
        """The template's data folder and password, made this server's own. As root, the
        server's user copies the folder itself: root reading a tree that user may write could
        be led, by a file swapped for a link, to copy one of root's files into its hands."""
        template = template_data()
        account = self.make_data_folder()
        ids = {"user": account[0], "group": account[1], "extra_groups": []} if account else {}
        copy = ["cp", "-RP", f"{template}/.", str(self.data)]  # -P: a link stays a link
        done = subprocess.run(
            copy, stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd="/",
            umask=0o077, check=False, **ids,
        )  # fmt: skip
        if done.returncode != 0:
            problem = last_problem(done.stderr)
            raise refusal(
                "pg_setup_failed", folder=str(self.folder), problem=problem, variable=ENV_URL
            )
        password = (template.parent / "password").read_text()  # root's, in root's folder
        os.close(private_file(self.password_file, password))

    def make_data_folder(self) -> tuple[int, int] | None:
        """The empty data folder (0700), the server's user's, who may reach it; that user."""
        account = server_account()
        try:
            self.data.mkdir(mode=0o700, exist_ok=True)
            if account:
                os.chown(self.data, *account)
                self.open_the_way(account, self.data)
        except OSError as error:
            raise refusal(
                "pg_data_folder", folder=str(self.data), reason=error.strerror, variable=ENV_URL
            ) from None
        return account

    def open_the_way(self, account: tuple[int, int], target: Path) -> None:
        """Let the server's user pass through every folder above `target` (never list or write
        one): the lab's own folders (the runs home and what is in it, this server's folder)
        get o+x; anyone else's must already let it through, or one line says what to do."""
        home = temp_dir() / f"labkit-runs-{os.getuid()}"
        for folder in reversed(target.absolute().parents):
            info = os.stat(folder)
            if passable(info, account):
                continue
            ours = folder == self.folder.absolute() or home in (folder, *folder.parents)
            if ours and info.st_uid == os.getuid():
                os.chmod(folder, stat.S_IMODE(info.st_mode) | stat.S_IXOTH)
                continue
            raise refusal(
                "pg_user_cannot_enter", user=SERVER_USER, folder=str(folder), variable=ENV_URL
            )

    def make_socket_folder(self) -> Path:
        """Where the server's socket goes: the data folder (0700, the server's alone) if the
        socket's path fits, else a short folder of the server's alone in a run folder of the
        runs home's, in use until the server stops: one that a killed server leaves is
        `labkit clean`'s to remove. Never a TCP port, never a folder outside the runs home."""
        port = self.settings.get("port", PORT)
        if fits_a_socket(self.data, port):
            return self.data
        home = runs_home()
        if not fits_a_socket(home / f"{SOCKET_RUN}{'x' * 8}" / "s", port):  # mkdtemp adds 8
            raise refusal(
                "pg_path_too_long", folder=str(self.data), short=str(home), variable=ENV_URL
            )
        run = new_run_dir(None, prefix=SOCKET_RUN)
        outlive_call(run)  # until the server stops: forget_socket_folder
        folder = run / "s"
        try:
            folder.mkdir(mode=0o700)
            account = server_account()
            if account:
                os.chown(folder, *account)
                self.open_the_way(account, folder)
        except BaseException:
            forget(run)
            raise
        return folder

    def forget_socket_folder(self) -> None:
        """Remove a socket folder of ours, with its run folder (never the data folder)."""
        folder, self.socket_folder = self.socket_folder, None
        if folder is not None and folder != self.data:
            forget(folder.parent)

    def launch_server(self) -> int:
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
        return log_start

    def wait_for_server(self, log_start: int) -> None:
        started = time.monotonic()
        while not self.ready():
            if self.process.poll() is not None or time.monotonic() - started > START_TIMEOUT:
                kill_and_reap(self.process)
                with open(self.log, "rb") as said:
                    said.seek(log_start)
                    problem = last_problem(said.read().decode(errors="replace"))
                raise refusal(
                    "pg_did_not_start", problem=problem, log=str(self.log), variable=ENV_URL
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


def fits_a_socket(folder: Path, port: str = PORT) -> bool:
    """Whether the path of the socket of a server on `port` in `folder` (`.s.PGSQL.<port>`:
    the room's server has a port of its own) is short enough for a Unix socket."""
    return len(str(folder / f".s.PGSQL.{port}").encode()) < SOCKET_PATH_MAX


def postgres_url(socket_folder: str, password_file: Path, database: str = "postgres") -> str:
    """A libpq URL to a server's socket folder; the password stays in its file (`passfile`),
    so the URL holds no secret and may be shown or saved."""
    query = urllib.parse.urlencode(
        {"host": socket_folder, "passfile": str(password_file)}, safe="/"
    )
    return f"postgresql://postgres@/{database}?{query}"


# --- the data folder the crash runs copy: one initdb per process, removed at exit

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


atexit.register(forget_template)
