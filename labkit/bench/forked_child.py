"""A forked worker seen through Popen's interface (poll, send_signal, wait), so that the
launcher handles fresh and forked workers alike."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time

from labkit.bench.portable import pidfd_or_none


class ForkedChild:
    """A forked worker seen through Popen's interface, so the launcher treats both alike.

    It waits on a pidfd, which becomes readable when the process exits; where there is none
    (macOS, a Linux kernel older than 5.3) it polls every 2 ms instead."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self.frozen = False
        self._pidfd = pidfd_or_none(pid)

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
                if self._pidfd is not None:
                    os.close(self._pidfd)
        return self.returncode

    def freeze(self) -> bool:
        """SIGSTOP its process group and wait until every thread of the worker has stopped:
        from then on it changes no file, as after a SIGKILL, but it has not been torn down
        yet (the few milliseconds of a process mapping all of LangGraph). False if it had
        exited instead (it is reaped then)."""
        if self.returncode is not None:
            return False
        if self.frozen:  # its stop was reported once: a second wait would never return
            return True
        try:
            os.killpg(self.pid, signal.SIGSTOP)
        except ProcessLookupError:  # not a group of its own
            os.kill(self.pid, signal.SIGSTOP)
        _, status = os.waitpid(self.pid, os.WUNTRACED)  # the whole group stop has completed
        if os.WIFSTOPPED(status):
            self.frozen = True
            return True
        self.returncode = os.waitstatus_to_exitcode(status)
        if self._pidfd is not None:
            os.close(self._pidfd)
        return False

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        waiting_on_pidfd = self.returncode is None and self._pidfd is not None
        if waiting_on_pidfd and not select.select([self._pidfd], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired(str(self.pid), timeout)
        while self.poll() is None:  # exited (pidfd readable) or not yet (polling): reap it
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(str(self.pid), timeout)
            time.sleep(0.002)
        return self.returncode
