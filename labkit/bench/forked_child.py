"""A forked worker seen through Popen's interface (poll, send_signal, wait), so that the
launcher handles fresh and forked workers alike."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

from labkit.bench.ctrl_c import ctrl_c_held
from labkit.bench.portable import pidfd_or_none
from labkit.bench.readable import readable


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
        # Two threads may poll at once (a sweep's, and the one that stops the sweep): one reaps.
        self._reaping = threading.Lock()

    def poll(self) -> int | None:
        with self._reaping, ctrl_c_held():
            if self.returncode is None:
                code = self._exit_code_if_ended()
                if code is not None:
                    self._ended(code)
        return self.returncode

    def _exit_code_if_ended(self) -> int | None:
        """Reap the worker if it has exited, and say its exit status (-9: SIGKILLed)."""
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        return os.waitstatus_to_exitcode(status) if pid else None

    def _ended(self, code: int) -> None:
        """Keep the exit status of the reaped worker; its pidfd is done with."""
        self.returncode = code
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
            self._ended(os.waitstatus_to_exitcode(status))
        return False

    def send_signal(self, sig: int) -> None:
        with self._reaping:  # never once reaped: its pid may be a stranger's by then
            if self.returncode is None:
                os.kill(self.pid, sig)

    def kill_group(self) -> None:
        """SIGKILL its process group (a retry's fork too), or it alone if it has none; not once
        another thread has reaped it, a moment before."""
        with self._reaping:
            if self.returncode is None:
                signal_group(self.pid, signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        waiting_on_pidfd = self.returncode is None and self._pidfd is not None
        if waiting_on_pidfd and not readable([self._pidfd], timeout):
            raise subprocess.TimeoutExpired(str(self.pid), timeout)
        while self.poll() is None:  # exited (pidfd readable) or not yet (polling): reap it
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(str(self.pid), timeout)
            time.sleep(0.002)
        return self.returncode


def signal_group(pid: int, sig: int) -> None:
    """Signal the process group that `pid` leads, or `pid` alone if it leads none."""
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:  # not a group of its own
        os.kill(pid, sig)
