"""Long panel work off the kernel's main thread: a status line at once, a progress bar, Stop.

A widget's click handler runs on the kernel's main thread, and while it runs the kernel does
nothing else: not the next click, not the next cell, not even drawing the bar. So a panel's
click only reads its widgets, and hands the work to its `BackgroundJob`, which says at once
what runs and then runs it on another thread. How a panel uses it (as `SweepPanel` does):

    self.job = BackgroundJob(self, [self.run_button], say("sweep_panel.unit"), stoppable=True)
    # in the panel's children: self.job.row (bar and Stop), self.status, self.error_line

    def _on_run(self, _button=None):
        modes = self.modes.value  # widgets are read now, on the kernel's thread

        def work(report):  # on the panels' thread; report(done, total, line) moves the bar
            return sweep(modes, progress=lambda done, total, r: report(done, total, r.spec.label))

        self.job.start("Sweeping every order at every kill point", work, self.show)
        # self.show(results) runs on the panels' thread too: it only sets widget values

and a test or a script clicks, then calls `panel.job.wait()`.

What the mechanism holds to, for every panel:
- The panel has `status` and `error_line` (HTML widgets) and an `error` attribute. A job's
  exception becomes one line in `error_line` (JupyterLab hides what a widget callback raises)
  and is kept in `error`, as `panel.shows_errors` does for a quick click.
- One job at a time per panel: its buttons are disabled while it runs and restored after (then
  `show` may change them), and a second `start` is refused (it returns False).
- Every panel's jobs run one after the other on one long-lived thread, "labkit-panels": Linux
  kills the trial server (and any process started with `die_with`) when the *thread* that
  started it ends, so a thread per job would take the server down after each job. A second
  panel's job waits its turn, and its status line says so.
- Output: ipywidgets 8 sends a widget's new value from any thread, but `print`, `display` and an
  `Output` widget's capture go to whatever cell the kernel runs at that moment, not to the
  panel. So `work` and `show` never print or display: `show` sets widget values (HTML, Image).
- Stop is Ctrl-C for the job, on the path Ctrl-C already takes: once Stop is clicked, the job's
  next `report` raises `Stopped` (a KeyboardInterrupt), and the work's own Ctrl-C handlers do the
  rest: a sweep cancels its queued trials and kills and reaps its workers
  (`launcher.kill_all_workers`); the trial server's client sends the server SIGINT, whose
  `interruptible` call kills its workers and answers "interrupted"; a run between two reports
  has reaped its workers already (`with WorkerProcess`). When the work has ended, the panel says
  "Stopped". The job kills nothing more itself, and neither do those handlers beyond their own
  workers (a sweep kills those under its folder): a step panel's paused worker on the same page
  goes on. Only work that reports progress can be stopped (`stoppable=True`); a single run ends
  by itself, within its timeout.
"""

from __future__ import annotations

import html
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

import ipywidgets as widgets

from labkit.bench.errors import LabError, RunFailed
from labkit.language import say
from labkit.language.refusals import error_line

__all__ = ["BackgroundJob", "Report", "Stopped", "error_html"]

Report = Callable[..., None]  # report(done, total, line=""): the bar, and what just finished
Result = TypeVar("Result")


class Stopped(KeyboardInterrupt):
    """Stop was clicked: raised inside the job at its next report, it goes where Ctrl-C goes."""


class Panel(Protocol):
    """What a panel offers its job: where to say what runs, and where an error goes."""

    status: widgets.HTML
    error_line: widgets.HTML
    error: Exception | None


def error_html(error: BaseException) -> str:
    """An exception as a panel's one error line; a refusal (a LabError with a code) in the
    reader's language, as the command line says it."""
    said = error_line(error) if isinstance(error, LabError | RunFailed) else str(error)
    return f'<span style="color:#D55E00"><b>{type(error).__name__}:</b> {html.escape(said)}</span>'


_queue: queue.SimpleQueue[BackgroundJob] = queue.SimpleQueue()
_thread: threading.Thread | None = None
_pending = 0  # jobs queued or running, in every panel
_pending_lock = threading.Lock()


def _busy() -> bool:
    """Some panel's job is queued or running: a new one waits its turn."""
    return _pending > 0


def _enqueue(job: BackgroundJob) -> None:
    """Queue the job for the panels' thread, started on first use."""
    global _thread, _pending
    with _pending_lock:
        _pending += 1
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_serve, name="labkit-panels", daemon=True)
            _thread.start()
    _queue.put(job)


def _serve() -> None:
    """The panels' thread: run each queued job, for as long as the kernel lives."""
    global _pending
    while True:
        job = _queue.get()
        try:
            job._run()
        finally:
            with _pending_lock:
                _pending -= 1


class BackgroundJob:
    """A panel's long work on the panels' thread, with a progress bar and a Stop button.
    `unit` is what the job counts, in the reader's words (the panel's catalogue says it: "runs",
    次运行), shown beside the bar and in "Done: 12 runs in 3.0 s."."""

    def __init__(
        self,
        panel: Panel,
        buttons: Sequence[widgets.Button],
        unit: str,
        stoppable: bool = False,
    ) -> None:
        self.panel, self.buttons, self.unit, self.stoppable = panel, list(buttons), unit, stoppable
        self.stopped = False  # the last job ended by Stop
        self.progress = widgets.IntProgress(value=0, min=0, max=1, description=unit)
        self.stop_button = widgets.Button(
            description=say("background.stop"), icon="stop", button_style="danger", disabled=True
        )
        self.stop_button.layout.display = None if stoppable else "none"
        self.stop_button.on_click(lambda _button: self.stop())
        self.row = widgets.HBox([self.progress, self.stop_button])
        self.row.layout.display = None if stoppable else "none"  # a single run: from its start
        self.row.add_class("labkit-job")  # CSS hooks for the real-browser test
        self.stop_button.add_class("labkit-stop")
        self._idle = threading.Event()
        self._idle.set()
        self._stop = threading.Event()
        self._lock = threading.Lock()  # the status line: a report never overwrites "Stopping"
        self._restore: dict[widgets.Button, bool] = {}
        self._what = ""
        self._done: tuple[int, int] | None = None  # the last report: done, total
        self._work: Callable[[Report], object] = lambda report: None
        self._show: Callable[[object], None] = lambda result: None

    @property
    def running(self) -> bool:
        """A job of this panel is queued or running."""
        return not self._idle.is_set()

    def start(
        self, what: str, work: Callable[[Report], Result], show: Callable[[Result], None]
    ) -> bool:
        """Say `what` runs (now, within the click), then run `work(report)` on the panels'
        thread and `show(result)` there. Returns False, starting nothing, if this panel's job
        still runs. Call it on the kernel's thread (from a click handler)."""
        if self.running:
            return False
        self._idle.clear()
        self._stop.clear()
        self.stopped = False
        self.panel.error = None
        self.panel.error_line.value = ""
        self._restore = {button: button.disabled for button in self.buttons}
        for button in self.buttons:
            button.disabled = True
        self.stop_button.disabled = not self.stoppable
        self.progress.max, self.progress.value, self.progress.bar_style = 1, 0, "info"
        self.row.layout.display = None
        self._what, self._work, self._show = what, work, show
        self._done = None
        self.panel.status.value = say(
            "background.waiting" if _busy() else "background.running", what=what
        )
        _enqueue(self)
        return True

    def stop(self) -> None:
        """Stop the running job: Ctrl-C at its next report. Says so at once."""
        if not self.running or not self.stoppable:
            return
        with self._lock:
            self._stop.set()
            self.stop_button.disabled = True
            self.panel.status.value = say("background.stopping")

    def wait(self, timeout: float = 120.0) -> None:
        """Return once this panel's job has ended and shown what it has (scripts, tests)."""
        if not self._idle.wait(timeout):
            raise TimeoutError(f"the panel's job still runs after {timeout} s: {self._what}")

    def _report(self, done: int, total: int, line: str = "") -> None:
        """The work's progress: the bar and the status line; `Stopped` once Stop is clicked."""
        with self._lock:
            if self._stop.is_set():
                raise Stopped
            self._done = done, total
            self.progress.max, self.progress.value = max(total, 1), done
            self.panel.status.value = f"{done}/{total}: {line}" if line else f"{done}/{total}"

    def _run(self) -> None:
        """On the panels' thread: the work, then what it ended with, then `show`."""
        started = time.monotonic()
        try:
            if self._stop.is_set():  # stopped while it waited its turn: nothing to kill
                self.stopped = True
                self._end("warning", say("background.stopped_before"))
                return
            self.panel.status.value = say("background.running", what=self._what)
            result = self._work(self._report)
        except KeyboardInterrupt:  # Stopped: the work's Ctrl-C handlers have killed and reaped
            self.stopped = True
            self._end("warning", self._stopped_line())
        except BaseException as error:  # the panels' thread must live on, whatever it was
            self._fail(error, started)
        else:
            seconds = f"{time.monotonic() - started:.1f}"
            self._end(
                "success",
                say("background.done_counted", count=self._count(self._done[1]), seconds=seconds)
                if self._done
                else say("background.done", seconds=seconds),
            )
            self.progress.value = self.progress.max
            try:
                self._show(result)
            except Exception as error:  # drawing it failed: say so in the panel
                self._fail(error, started)
        finally:
            self._idle.set()

    def _count(self, n: int) -> str:
        """`n` of this job's unit, in words: "12 runs"."""
        return say("background.count", n=n, unit=self.unit)

    def _stopped_line(self) -> str:
        if self._done is None:
            return say("background.stopped")
        done, total = self._done
        return say("background.stopped_after", done=done, count=self._count(total))

    def _fail(self, error: BaseException, started: float) -> None:
        self.panel.error = error if isinstance(error, Exception) else RuntimeError(str(error))
        self.panel.error_line.value = error_html(error)
        self._end("danger", say("background.failed", seconds=f"{time.monotonic() - started:.1f}"))

    def _end(self, style: str, line: str) -> None:
        """The bar's colour and the status line; the buttons as they were before the job."""
        self.progress.bar_style = style
        self.panel.status.value = line
        self.stop_button.disabled = True
        for button, disabled in self._restore.items():
            button.disabled = disabled
