"""The machine's process table, read the same way on Linux (/proc) and macOS (`ps`).

A server's crash kills its children by pid and waits until each has ended, and `clean_schemas`
tells a live run's process from a later one with the same pid: both need what the system says of
a process, not what Popen remembers.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

from labkit.bench.portable import LINUX

STOP_TIMEOUT = 10.0  # seconds a server (or what is left of its group) may take to end


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
        # Not a glob of /proc/[0-9]*/stat: its own check of each path raises
        # ProcessLookupError for a process that ends meanwhile, outside any suppress here.
        for pid in filter(str.isdigit, os.listdir("/proc")):
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = Path(f"/proc/{pid}/stat").read_text()
                state, parent, group = stat.rsplit(")", 1)[1].split()[:3]
                found[int(pid)] = (int(parent), int(group), state)
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
