"""Start worker processes, stop them at kill points, kill them, and always reap them.

A worker that must stop at a point writes the point's name to a notify pipe and blocks
reading a resume pipe. The parent waits on the notify pipe (never a sleep-and-hope), then
either writes "continue" or sends SIGKILL. The notify pipe also tells the parent that the
worker has exited: it reaches end-of-file.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from labkit.orders import WriteOrder
from labkit.trace import Trace
from labkit.worker import EXIT_CODE

__all__ = ["WorkerProcess", "WorkerReport", "kill_all_workers"]

# Workers start with `python -S`: no site-packages, only the standard library and labkit.
LABKIT_ROOT = str(Path(__file__).resolve().parent.parent)
# `-c` rather than `-m labkit.worker`: runpy's own imports would cost more than the worker's.
WORKER_MAIN = "import sys, labkit.worker; labkit.worker.run_step_from_argv(sys.argv)"


@dataclass
class WorkerReport:
    """What one worker process did, as the parent saw it."""

    role: str
    pid: int
    exit_code: int | None
    killed_at: str | None  # the kill point where it died, if it was killed there
    timed_out: bool
    seconds: float
    stdout: str
    stderr: str

    def to_json(self) -> dict:
        return asdict(self)


_LIVE: set[WorkerProcess] = set()  # started and not yet reaped, in any thread


def kill_all_workers() -> None:
    """SIGKILL and reap every worker still alive: the last word of an interrupted sweep."""
    for worker in list(_LIVE):
        worker.close()


class WorkerProcess:
    """One worker in its own process. Use it as a context manager: leaving it reaps the process."""

    def __init__(
        self,
        run_dir: Path,
        order: WriteOrder,
        role: str,
        *,
        exit_at: str | None = None,
        pause_at: tuple[str, ...] = (),
        timeout: float = 10.0,
    ) -> None:
        self.run_dir, self.role, self.timeout = Path(run_dir), role, timeout
        self.exit_at = exit_at
        self.job = {
            "run_dir": str(self.run_dir),
            "order": order.name,
            "files": list(order.files),
            "role": role,
            "exit_at": exit_at,
            "pause_at": list(pause_at),
        }
        self.proc: subprocess.Popen | None = None
        self.paused_at: str | None = None
        self.killed_at: str | None = None
        self.timed_out = False
        self._lock = threading.Lock()

    def start(self) -> WorkerProcess:
        notify_r, notify_w = os.pipe()
        resume_r, resume_w = os.pipe()
        self.job.update(notify_fd=notify_w, resume_fd=resume_r)
        with (
            open(self.run_dir / f"{self.role}.stdout", "wb") as out,
            open(self.run_dir / f"{self.role}.stderr", "wb") as err,
        ):
            self.proc = subprocess.Popen(
                [sys.executable, "-S", "-c", WORKER_MAIN, json.dumps(self.job)],
                env={**os.environ, "PYTHONPATH": LABKIT_ROOT},
                cwd=self.run_dir,
                stdout=out,
                stderr=err,
                pass_fds=(notify_w, resume_r),
                start_new_session=True,  # a Ctrl-C reaches the parent only; the parent reaps
            )
        self._started = time.monotonic()
        _LIVE.add(self)
        os.close(notify_w)
        os.close(resume_r)
        self._notify, self._resume = notify_r, resume_w
        return self

    def _time_left(self) -> float:
        return max(self._started + self.timeout - time.monotonic(), 0.0)

    def wait_for_pause(self) -> str | None:
        """Block until the worker stops at a point (return its name) or exits (return None).

        At the timeout the worker is killed and marked `timed_out`."""
        ready, _, _ = select.select([self._notify], [], [], self._time_left())
        if not ready:
            self.timed_out = True
            self.kill()
            return None
        self.paused_at = os.read(self._notify, 64).decode().strip() or None
        return self.paused_at

    def resume(self) -> None:
        """Let a paused worker go on to its next point."""
        os.write(self._resume, b"continue\n")
        self.paused_at = None

    def kill(self) -> None:
        """SIGKILL the worker where it stands, reap it, and note the kill in the trace."""
        with self._lock:
            if self.proc is None or self.proc.returncode is not None:
                return
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
            self._ended = time.monotonic()
            self.killed_at = self.paused_at
            trace = Trace(self.run_dir, self.role)
            trace.event(
                "kill",
                pid=self.proc.pid,
                by=os.getpid(),
                point=self.killed_at,
                mode="sigkill",
                timed_out=self.timed_out,
            )
            trace.close()

    def wait(self) -> int:
        """Wait for the worker to exit by itself (killing it at the timeout) and reap it."""
        while self.wait_for_pause() is not None:
            self.resume()  # a pause nobody planned for: let it go on
        try:
            self.proc.wait(timeout=self._time_left())
            self._ended = time.monotonic()
        except subprocess.TimeoutExpired:
            self.timed_out = True
            self.kill()
        return self.proc.returncode

    def close(self) -> None:
        """Kill the worker if it still runs, reap it, and close the pipes. Safe to call twice."""
        if self.proc is None:
            return
        self.kill()
        with self._lock:
            if self._resume is not None:
                os.close(self._notify)
                os.close(self._resume)
                self._resume = None
            _LIVE.discard(self)

    def report(self) -> WorkerReport:
        """The worker's record, once it has been reaped."""
        exited_at_point = self.proc.returncode == EXIT_CODE and self.exit_at
        return WorkerReport(
            role=self.role,
            pid=self.proc.pid,
            exit_code=self.proc.returncode,
            killed_at=self.killed_at or (self.exit_at if exited_at_point else None),
            timed_out=self.timed_out,
            seconds=round(self._ended - self._started, 4),
            stdout=(self.run_dir / f"{self.role}.stdout").read_text(),
            stderr=(self.run_dir / f"{self.role}.stderr").read_text(),
        )

    def __enter__(self) -> WorkerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
