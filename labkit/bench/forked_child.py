"""A forked worker seen through Popen's interface (poll, send_signal, wait), so that the
launcher handles fresh and forked workers alike."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time

from labkit.bench.ctrl_c import ctrl_c_held
from labkit.bench.portable import pidfd_or_none


class ForkedChild:
    """A forked worker seen through Popen's interface, so the launcher treats both alike.

    It waits on a pidfd, which becomes readable when the process exits; where there is none
    (macOS, a Linux kernel older than 5.3) it polls every 2 ms instead. A reap and the status
    it returns are kept together (`ctrl_c_held`): a Ctrl-C between the two would leave a
    worker that is gone but still counted as running."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self.frozen = False
        self._pidfd = pidfd_or_none(pid)

    def poll(self) -> int | None:
        if self.returncode is None:
            with ctrl_c_held():
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid:
                    self._ended(status)
        return self.returncode

    def _ended(self, status: int) -> None:
        """Keep the exit status of the reaped worker; its pidfd is done with."""
        self.returncode = os.waitstatus_to_exitcode(status)
        if self._pidfd is not None:
            os.close(self._pidfd)

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
        with ctrl_c_held():
            _, status = os.waitpid(self.pid, os.WUNTRACED)  # the whole group stop has completed
            if os.WIFSTOPPED(status):
                self.frozen = True
                return True
            self._ended(status)
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
