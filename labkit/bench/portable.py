"""What Linux gives the bench that macOS does not, and what the bench does there instead.

Three things, each with a fallback that is slower but right:
- a process that dies with its parent: Linux's prctl(PR_SET_PDEATHSIG) SIGKILLs it the moment
  its parent ends; elsewhere a timer signal (SIGALRM, every `WATCH_EVERY` seconds) has it look
  whether its parent has changed (a process whose parent ends is handed to another) and SIGKILL
  itself then. A signal, not a thread: the trial server must not fork while threads run;
- the open file descriptors: listed from /proc/self/fd on Linux, from /dev/fd on macOS;
- waiting for a forked child: on a pidfd (Linux 5.3 and newer), else by polling waitpid.

`LABKIT_AS_ON_MACOS=1` in the environment makes a Linux process use every fallback, so the tests
run them here. Worker-side: standard library only.
"""

from __future__ import annotations

import atexit
import functools
import os
import signal
import sys

__all__ = [
    "AS_ON_MACOS",
    "LINUX",
    "check_as_on_macos",
    "die_with",
    "linux_now",
    "open_descriptors",
    "pidfd_or_none",
]

AS_ON_MACOS = "LABKIT_AS_ON_MACOS"


def linux_now() -> bool:
    """Whether this is Linux, and the environment does not ask for macOS's ways now."""
    return sys.platform == "linux" and os.environ.get(AS_ON_MACOS) != "1"


LINUX = linux_now()  # as this process started: what it uses itself
PR_SET_PDEATHSIG = 1  # prctl(2): the signal this process gets when its parent ends
WATCH_EVERY = 0.02  # seconds between two looks at the parent, where Linux's prctl is missing


def check_as_on_macos() -> None:
    """Refuse a value of LABKIT_AS_ON_MACOS other than 1 or 0: "yes" would quietly leave
    Linux's ways in place, and a test meant for the fallbacks would test Linux again."""
    value = os.environ.get(AS_ON_MACOS, "")
    if value not in ("1", "0", ""):
        from labkit.bench.errors import refusal  # the caller's check: workers never make it

        raise refusal("as_on_macos", variable=AS_ON_MACOS, value=repr(value))


@functools.cache
def libc() -> object:
    """The C library, for prctl; loaded once in the trial server, so a spare finds it loaded."""
    import ctypes  # only processes that die with their parent need it

    return ctypes.CDLL(None, use_errno=True)


def die_with(parent: int, how: int = signal.SIGKILL) -> None:
    """SIGKILL this process the moment `parent` ends, and exit now if it has ended already. A
    killed kernel or CLI so takes its trial server along, and the server its spares and
    workers, wherever they are in a job. A process with something to end first asks for
    another signal (`how`: the hub's keeper, SIGTERM). (On Linux, strictly: when the thread
    of `parent` that started this process ends.)"""
    if LINUX:
        libc().prctl(PR_SET_PDEATHSIG, how)
    else:  # a fork does not inherit the timer: each process that must die with its parent sets it

        def parent_gone(*_: object) -> None:
            if os.getppid() != parent:
                signal.setitimer(signal.ITIMER_REAL, 0)  # once: `how` may ask, not kill
                os.kill(os.getpid(), how)

        signal.signal(signal.SIGALRM, parent_gone)
        signal.setitimer(signal.ITIMER_REAL, WATCH_EVERY, WATCH_EVERY)
        # Stopped at exit, before Python's shutdown puts SIGALRM back to its default (death): a
        # tick after that would kill a process that has finished its work.
        atexit.register(signal.setitimer, signal.ITIMER_REAL, 0)
    if os.getppid() != parent:
        os._exit(0)


def open_descriptors() -> list[int]:
    """This process's open file descriptors (the listing's own among them, closed once it has
    returned). Listed rather than tried one by one: `os.closerange` up to the limit makes one
    call per number, a million in many containers."""
    return [int(name) for name in os.listdir("/proc/self/fd" if LINUX else "/dev/fd")]


def pidfd_or_none(pid: int) -> int | None:
    """A descriptor that becomes readable when child `pid` exits, or None where there is none
    (macOS, a Linux kernel older than 5.3): the caller polls instead."""
    if not LINUX or not hasattr(os, "pidfd_open"):
        return None
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None
