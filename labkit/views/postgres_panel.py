"""Lesson 7's panel: pick where the Postgres server dies in a COMMIT, click Run, read what the
restarted server kept. A thin view over `run_crash`; the run goes off the kernel's thread."""

from __future__ import annotations

from html import escape

import ipywidgets as widgets

from labkit.language import say
from labkit.studies.postgres.experiment import run_crash
from labkit.studies.postgres.spec import CRASH_POINTS, CrashResult
from labkit.views.background import BackgroundJob
from labkit.views.controls import run_button
from labkit.views.postgres import CRASH_MEANINGS, crashes_html

__all__ = ["ServerCrashPanel"]


class ServerCrashPanel(widgets.VBox):
    """Crash point; Run; the crash's row (what Postgres showed, what the client heard, what
    survived) and the restarted server's own words."""

    def __init__(self) -> None:
        self.result: CrashResult | None = None
        self.error: Exception | None = None
        self.point = widgets.ToggleButtons(
            options=list(CRASH_POINTS), description=say("postgres_panel.kill_at")
        )
        self.meaning = widgets.HTML(self._meaning())
        self.run_button = run_button(say("postgres_panel.run"))
        self.status = widgets.HTML()
        self.error_line = widgets.HTML()
        self.output = widgets.HTML()
        self.job = BackgroundJob(self, [self.run_button], unit=say("postgres_panel.unit"))
        self.point.observe(lambda _change: setattr(self.meaning, "value", self._meaning()), "value")
        self.run_button.on_click(self._on_run)
        super().__init__(
            [
                self.point,
                self.meaning,
                self.run_button,
                self.status,
                self.job.row,
                self.error_line,
                self.output,
            ]
        )

    def _meaning(self) -> str:
        return f"<i>{escape(CRASH_MEANINGS[self.point.value])}</i>"

    def _on_run(self, _button: object = None) -> None:
        point = self.point.value  # read now, on the kernel's thread
        self.job.start(
            say("postgres_panel.running", point=f"<b>{point}</b>"),
            lambda _report: run_crash(point),
            self.show,
        )

    def show(self, result: CrashResult) -> None:
        self.result = result
        log = escape("\n".join(result.recovery_log))
        self.output.value = (
            crashes_html([result])
            + f"<p>{say('postgres_panel.restarted', seconds=result.restart_seconds)}</p>"
            + f"<pre>{log}</pre>"
        )

    def click(self) -> None:
        """Same as clicking Run: the run goes on after it returns (`self.job.wait()`)."""
        self.run_button.click()
