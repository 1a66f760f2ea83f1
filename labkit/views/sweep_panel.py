"""The sweep panel: every order at every kill point, with a progress bar, as a matrix.

The sweep runs off the kernel's thread (`background.BackgroundJob`); Stop ends it as Ctrl-C
ends `lk.sweep`: its queued trials cancelled, every worker killed and reaped. The matrix fills
as runs finish, in the sweep's order, said partial until the last: after Stop it holds the
runs that finished, never the previous sweep's."""

from __future__ import annotations

from pathlib import Path

import ipywidgets as widgets

from labkit.language import say
from labkit.studies.commit_window.runs import RunResult
from labkit.studies.commit_window.spec import KILL_MODES
from labkit.studies.commit_window.sweeps import sweep, sweep_specs
from labkit.views.background import BackgroundJob, Report
from labkit.views.commit_window_words import outcome_name
from labkit.views.controls import pick_many, run_button
from labkit.views.tables import sweep_html

__all__ = ["SweepPanel"]


class SweepPanel(widgets.VBox):
    """Pick the kill modes, click Run sweep, watch the bar (or Stop), read the matrix."""

    def __init__(self) -> None:
        self.results: list[RunResult] = []
        self.error: Exception | None = None
        self.modes = pick_many(say("sweep_panel.kill_modes"), KILL_MODES, rows=2, chosen=["exit"])
        self.run_button = run_button(say("sweep_panel.run"))
        self.status = widgets.HTML()
        self.error_line = widgets.HTML()
        self.matrix = widgets.HTML()
        self.job = BackgroundJob(
            self, [self.run_button], unit=say("sweep_panel.unit"), stoppable=True
        )
        self.progress = self.job.progress
        self.run_button.on_click(self._on_run)
        super().__init__(
            [
                widgets.HBox([self.modes, self.run_button]),
                self.job.row,
                self.status,
                self.error_line,
                self.matrix,
            ]
        )
        self.add_class("labkit-sweep-panel")

    def _on_run(self, _button: widgets.Button | None = None) -> None:
        modes = self.modes.value or ("exit",)
        labels = [spec.label for spec in sweep_specs(Path(), modes)]  # the matrix's order
        finished: list[RunResult] = []
        self.matrix.value = ""  # the last sweep's matrix would pass for this one's

        def work(report: Report) -> list[RunResult]:
            def advance(done: int, total: int, result: RunResult) -> None:
                finished.append(result)
                finished.sort(key=lambda r: labels.index(r.spec.label))
                self.show_partial(finished, total)
                report(done, total, f"{result.spec.label} → <b>{outcome_name(result.outcome)}</b>")

            return sweep(modes, progress=advance)

        self.job.start(say("sweep_panel.sweeping", modes=", ".join(modes)), work, self.show)

    def show_partial(self, finished: list[RunResult], total: int) -> None:
        """The runs finished so far, said to be part of the sweep."""
        partial = say("sweep_panel.partial", done=len(finished), total=total)
        self.matrix.value = f"<p>{partial}</p>{sweep_html(finished)}"

    def show(self, results: list[RunResult]) -> None:
        self.results = results
        self.matrix.value = sweep_html(results)

    def click(self) -> None:
        """Same as clicking Run sweep: the sweep goes on after it returns (`self.job.wait()`)."""
        self.run_button.click()
