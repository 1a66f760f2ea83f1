"""A system user per participant (the hub runs each one's server as that user): made with
their lessons, and removed with everything they left.

Only root can make users, and only a root hub can start a server as another user
(LocalProcessSpawner); without root, say what to run instead.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from labkit.bench.errors import refusal

PREFIX = "workshop-"
LESSONS = Path(__file__).resolve().parents[2] / "notebooks"
MAX_PARTICIPANTS = 300
NAME = re.compile(r"[a-z_][a-z0-9_-]{0,20}")  # what useradd takes, short enough for a suffix


def names(count: int, prefix: str = PREFIX) -> list[str]:
    """prefix1 … prefixN."""
    return [f"{prefix}{n}" for n in range(1, count + 1)]


def instructor(prefix: str = PREFIX) -> str:
    return f"{prefix}instructor"


def check_prefix(prefix: str) -> str:
    if not NAME.fullmatch(prefix):
        raise refusal("hub_prefix", value=repr(prefix))
    return prefix


def existing(prefix: str = PREFIX) -> list[str]:
    """The participants already made with this prefix, in their order."""
    number = re.compile(re.escape(prefix) + r"(\d+)")
    found = [(int(m[1]), u.pw_name) for u in pwd.getpwall() if (m := number.fullmatch(u.pw_name))]
    return [name for _, name in sorted(found)]


def need_root() -> None:
    if os.geteuid() != 0:
        raise refusal("hub_needs_root")


def create(users: list[str]) -> list[str]:
    """Make each missing user (a home of their own, 0700; no password: they log in through
    the hub only), with the lessons in their home. Returns those it made."""
    need_root()
    made = []
    for name in users:
        try:
            pwd.getpwnam(name)
        except KeyError:
            command = ["useradd", "--create-home", "--user-group", "--shell", "/bin/bash", name]
            subprocess.run(command, check=True)
            made.append(name)
        os.chmod(pwd.getpwnam(name).pw_dir, 0o700)
        copy_lessons(name)
    return made


def as_user(name: str) -> list[str]:
    """The command prefix that runs what follows as the user `name` (their groups, no root)."""
    user = pwd.getpwnam(name)
    return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups"]


def copy_lessons(name: str) -> None:
    """The lessons into ~name/notebooks, unless already there: copied by the user themselves
    (root writing into a home another user controls could be led through a symlink)."""
    user = pwd.getpwnam(name)
    if os.geteuid() != 0 and os.getuid() != user.pw_uid:
        return
    target = str(Path(user.pw_dir) / "notebooks")
    copy = 'test -e "$1" || cp -R "$2" "$1"'
    ignore = ".ipynb_checkpoints"
    subprocess.run(
        [*as_user(name), "sh", "-c", copy + f' && rm -rf "$1"/{ignore} "$1"/*/{ignore}', "sh",
         target, str(LESSONS)],
        check=True, cwd="/",
    )  # fmt: skip


def write_private(name: str, path: str, text: str) -> None:
    """`text` into `path` (mode 0600), written by the user `name` themselves."""
    command = [*as_user(name), "sh", "-c", 'umask 077 && cat > "$1"', "sh", path]
    subprocess.run(command, input=text, text=True, check=True, cwd="/")


def processes_of(uid: int) -> list[int]:
    """The PIDs of every process that runs as `uid`."""
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    pids.append(int(entry.name))
            except OSError:
                pass
    return pids


def remove(users: list[str]) -> None:
    """End each user's processes (all started by the hub for them), then remove the user,
    their home and their runs home (/tmp/labkit-runs-<uid>)."""
    need_root()
    for name in users:
        try:
            uid = pwd.getpwnam(name).pw_uid
        except KeyError:
            continue
        for _ in range(50):
            pids = processes_of(uid)
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)
        subprocess.run(["userdel", "--remove", name], check=True, capture_output=True)
        runs = Path(f"/tmp/labkit-runs-{uid}")
        if runs.is_dir() and not runs.is_symlink() and runs.stat().st_uid == uid:
            shutil.rmtree(runs, ignore_errors=True)
