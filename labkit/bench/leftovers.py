"""What a worker's code left running when the worker ended: found, ended, and named.

A reader's step may start a process (`subprocess.Popen(["sleep", "300"])`) or a daemon (fork,
`setsid`, fork again) and return without waiting for it. Nothing it starts outlives its worker:
once the launcher has reaped a worker, it ends what is left and says what that was
(`WorkerReport.left`).

- Every worker runs in a session of its own, so what its code starts is in its process group,
  which one `killpg` ends. That is all there is on macOS, and for fresh workers, whose parent
  (the kernel, the CLI) adopts nothing.
- A daemon leaves that group (`setsid`). On Linux the trial server, and each worker it forks,
  is a subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`): an orphan of the worker's code becomes the
  worker's child rather than PID 1's, and once the worker has ended, the server's. So every
  process the worker's code left is a child of the server that the server did not start:
  each is named, killed and reaped, and so are the orphans that killing it leaves, in turn.
"""

from __future__ import annotations

import contextlib
import os
import signal

from labkit.bench.portable import LINUX, libc

__all__ = ["become_subreaper", "children", "end_leftovers"]

PR_SET_CHILD_SUBREAPER = 36  # prctl(2): orphans among this process's descendants become its own
NAME_WIDTH = 40  # characters of a left process's command line that its name keeps


def children_files() -> list[str]:
    """Where Linux lists this process's children: one file per thread, since a child is listed
    under the thread that forked it (a lane's thread forks workers), and an orphan under the
    thread it was handed to."""
    return [f"/proc/self/task/{tid}/children" for tid in os.listdir("/proc/self/task")]


def become_subreaper() -> bool:
    """Make this process adopt the orphans among its descendants, where Linux can (and lists
    a process's children, which `children` reads); whether it did. Two system calls."""
    if not LINUX or not os.path.exists(f"/proc/self/task/{os.getpid()}/children"):
        return False
    return libc().prctl(PR_SET_CHILD_SUBREAPER, 1) == 0


def children() -> set[int]:
    """The pids of this process's children (those it adopted among them), whichever of its
    threads they are listed under. Linux's lists are snapshots that a fork or an exit at the
    same moment can leave one short (proc(5)): read until two readings agree."""
    seen, last = listed_children(), None
    for _ in range(5):
        if seen == last:
            break
        seen, last = listed_children(), seen
    return seen | (last or set())


def listed_children() -> set[int]:
    """One reading of every thread's list of children."""
    found = set()
    for listed in children_files():
        with contextlib.suppress(FileNotFoundError), open(listed) as pids:  # a thread that ended
            found.update(int(pid) for pid in pids.read().split())
    return found


def end_leftovers(group: int, expected: set[int] | None, killed: bool = False) -> list[str]:
    """End what the code of a reaped worker (process group `group`) left running; a name for
    each process that was still running. `expected`: this process's children that are not the
    worker's (it is a subreaper), or None (it is not: only the worker's group can be found).
    `killed`: the lab SIGKILLed the worker's whole group, so what is dying in it is not named
    (a retry's own fork, say); what left the group (a daemon) still is."""
    if expected is None:
        left = end_group(group)
        return [] if killed else left
    named = []
    while adopted := children() - expected:
        running = [pid for pid in adopted if not (killed and in_group(pid, group))]
        named += filter(None, map(name_of, running))  # a zombie has no name: it was not running
        for pid in adopted:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in adopted:  # once it is reaped, the orphans it left are this process's children
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
    return named


def in_group(pid: int, group: int) -> bool:
    """Whether `pid` is (or, a zombie, was) in process group `group`."""
    try:
        return os.getpgid(pid) == group
    except ProcessLookupError:
        return False


def end_group(group: int) -> list[str]:
    """SIGKILL what is left of process group `group`; the names of its processes."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:  # nothing is left: the common case, one system call
        return []
    named = group_members(group)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
    return named


def group_members(group: int) -> list[str]:
    """The names of the processes in process group `group`: from /proc on Linux, from `ps`
    elsewhere (macOS has no /proc)."""
    if not LINUX:
        import subprocess  # only where something was left, and there is no /proc

        command = ["ps", "-A", "-ww", "-o", "pgid=,args="]
        listed = subprocess.run(command, capture_output=True, text=True, errors="replace")
        rows = (line.split(maxsplit=1) for line in listed.stdout.splitlines())
        return [shortened(row[-1].split(" ")) for row in rows if row[0] == str(group)]
    named = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):  # gone meanwhile
            if os.getpgid(int(pid)) == group and (name := name_of(int(pid))):
                named.append(name)
    return named


def name_of(pid: int) -> str | None:
    """A process's command line, shortened; None for a zombie (or a process gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            argv = cmdline.read().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return None
    return shortened(argv) if argv else None


def shortened(argv: list[str]) -> str:
    """`sleep 300`: the program's own name and its arguments, cut to NAME_WIDTH characters."""
    text = " ".join([os.path.basename(argv[0]), *argv[1:]])
    return text if len(text) <= NAME_WIDTH else text[: NAME_WIDTH - 1] + "…"
