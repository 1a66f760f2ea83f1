"""Instructor step mode in a notebook: Start, then Continue or Kill -9 at each stop, Recover.

Start, Continue and Kill take a few milliseconds and run in the click; Recover (a fresh
worker, the files read back, the timeline drawn) runs off the kernel's thread
(`background.BackgroundJob`)."""

from __future__ import annotations

import ipywidgets as widgets

from labkit.language import say
from labkit.studies.commit_window.orders import ORDERS
from labkit.studies.commit_window.runs import RunResult
from labkit.studies.commit_window.stepping import StepSession
from labkit.views.background import BackgroundJob
from labkit.views.controls import pick_one
from labkit.views.panel import TimelineView, shows_errors
from labkit.views.tables import before_after_html, outcome_badge, snapshot_html

__all__ = ["StepPanel"]


class StepPanel(widgets.VBox):
    """The worker pauses at every kill point; the files are shown as they are at that moment."""

    def __init__(self, order: str = "effect_first") -> None:
        self.session: StepSession | None = None
        self.error: Exception | None = None
        self.order = pick_one(say("step_panel.order"), ORDERS, order)
        self.start_button = widgets.Button(description=say("step_panel.start"), icon="play")
        self.continue_button = widgets.Button(
            description=say("step_panel.continue"), icon="forward"
        )
        self.kill_button = widgets.Button(
            description=say("step_panel.kill"), button_style="danger", icon="bolt"
        )
        self.recover_button = widgets.Button(
            description=say("step_panel.recover"), button_style="success", icon="refresh"
        )
        self.status = widgets.HTML(say("step_panel.click_start"))
        self.error_line = widgets.HTML()
        self.files = widgets.HTML()
        self.timeline = TimelineView()
        self.start_button.on_click(self._on_start)
        self.continue_button.on_click(self._on_continue)
        self.kill_button.on_click(self._on_kill)
        self.recover_button.on_click(self._on_recover)
        buttons = [self.start_button, self.continue_button, self.kill_button, self.recover_button]
        self.job = BackgroundJob(self, buttons, unit=say("step_panel.unit"))
        super().__init__(
            [
                widgets.HBox([self.order, *buttons]),
                self.status,
                self.job.row,
                self.error_line,
                self.files,
                self.timeline,
            ]
        )
        self._enable()

    def _enable(self) -> None:
        """Only the buttons that make sense now can be clicked; the order stays as it is from
        Start until the session ends with Recover, so the panel never names another order."""
        paused = self.session is not None and not self.session.finished
        self.order.disabled = self.session is not None and self.session.result is None
        self.start_button.disabled = paused
        self.continue_button.disabled = self.kill_button.disabled = not paused
        self.recover_button.disabled = (
            self.session is None or paused or self.session.result is not None
        )

    def _show_stop(self) -> None:
        s = self.session
        if s.finished:
            self.status.value = say("step_panel.finished")
        else:
            point = f"<b>{s.paused_at}</b>"
            self.status.value = say("step_panel.paused", point=point, pid=s.worker.proc.pid)
        self.files.value = snapshot_html(s.state())
        self._enable()

    @shows_errors
    def _on_start(self, _button: object = None) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None
        try:
            self.session = StepSession(self.order.value)
        finally:
            self._enable()  # also when it failed to start: the order can be changed again
        self._show_stop()

    @shows_errors
    def _on_continue(self, _button: object = None) -> None:
        self.session.proceed()
        self._show_stop()

    @shows_errors
    def _on_kill(self, _button: object = None) -> None:
        point = self.session.kill()
        self.status.value = say("step_panel.killed", point=f"<b>{point}</b>")
        self.files.value = snapshot_html(self.session.state())
        self._enable()

    def _on_recover(self, _button: object = None) -> None:
        session = self.session
        self.job.start(say("step_panel.recovering"), lambda _report: session.recover(), self.show)

    def show(self, result: RunResult) -> None:
        self.status.value = f"<p>{outcome_badge(result.outcome, result.failure)}</p>"
        self.files.value = before_after_html(result)
        self.timeline.show(result)
        self._enable()
