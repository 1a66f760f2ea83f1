"""The system users labkit runs its servers as when it runs as root: one of the lab's own per
kind of server (`labkit-postgres`, `labkit-hub`), used for nothing else.

A shared account such as `nobody` will not do: every other process that runs as it could then
rewrite the server's files (Postgres's pg_hba.conf, say) and take the server over. Each account
is made once, when first missing, with no home, no shell and no password: no one logs in as it.
"""

from __future__ import annotations

import fcntl
import os
import pwd
import shlex
import subprocess

from labkit.bench.errors import refusal

# Two useradds at once may both succeed, the second writing /etc/passwd without the first's
# user (seen in a container: a uid handed out, then gone). Labkits that make a user take turns
# on a lock of /etc itself: a folder that stays (the files in it are replaced), never written.
TAKING_TURNS = "/etc"


def make_command(name: str) -> list[str]:
    """How the user `name` is made: a system user with a group of its own, no home, no shell."""
    return [
        "useradd", "--system", "--user-group", "--no-create-home",
        "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name,
    ]  # fmt: skip


def system_account(name: str) -> tuple[int, int]:
    """The (uid, gid) of the lab's own system user `name`, made if missing (as root). Another
    labkit waits its turn; someone else may make it meanwhile, so a failed `useradd` is
    followed by another look. Where it cannot be made, one line says how to make it."""
    account = looked_up(name)
    if account:
        return account
    turn = os.open(TAKING_TURNS, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(turn, fcntl.LOCK_EX)
        reason = "" if looked_up(name) else add_user(name)
    finally:
        os.close(turn)
    account = looked_up(name)
    if account:
        return account
    command = shlex.join(make_command(name))
    raise refusal("no_system_account", user=name, reason=reason, command=command)


def looked_up(name: str) -> tuple[int, int] | None:
    """The user's (uid, gid), or None if there is no such user."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return None
    return entry.pw_uid, entry.pw_gid


def add_user(name: str) -> str:
    """Run `useradd` for `name`; what went wrong, in its words, or "" if it worked."""
    try:
        done = subprocess.run(make_command(name), capture_output=True, text=True, check=False)
    except OSError as error:  # no useradd here (macOS)
        return f"useradd: {error.strerror}"
    lines = done.stderr.strip().splitlines()
    return "" if done.returncode == 0 else (lines[-1] if lines else f"status {done.returncode}")
