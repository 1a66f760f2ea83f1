"""The sweep panel: every order at every kill point, with a progress bar, as a matrix."""

from __future__ import annotations

import ipywidgets as widgets

from labkit.studies.commit_window.runs import RunResult
from labkit.studies.commit_window.spec import KILL_MODES
from labkit.studies.commit_window.sweeps import sweep
from labkit.views.panel import shows_errors
from labkit.views.tables import sweep_html

__all__ = ["SweepPanel"]


class SweepPanel(widgets.VBox):
    """Pick the kill modes, click Run sweep, watch the bar, read the matrix."""

    def __init__(self) -> None:
        self.results: list[RunResult] = []
        self.error: Exception | None = None
        self.modes = widgets.SelectMultiple(
            options=list(KILL_MODES), value=["exit"], description="kill modes", rows=2
        )
        self.run_button = widgets.Button(
            description="Run sweep", button_style="primary", icon="play"
        )
        self.progress = widgets.IntProgress(value=0, min=0, max=1, description="runs")
        self.status = widgets.HTML()
        self.error_line = widgets.HTML()
        self.matrix = widgets.HTML()
        self.run_button.on_click(self._on_run)
        super().__init__(
            [
                widgets.HBox([self.modes, self.run_button]),
                self.progress,
                self.status,
                self.error_line,
                self.matrix,
            ]
        )

    def _advance(self, done: int, total: int, result: RunResult) -> None:
        self.progress.max, self.progress.value = total, done
        self.status.value = f"{done}/{total}: {result.spec.label} → <b>{result.outcome}</b>"

    @shows_errors
    def _on_run(self, _button: widgets.Button | None = None) -> None:
        self.run_button.disabled = True
        self.progress.value = 0
        try:
            self.results = sweep(self.modes.value or ("exit",), progress=self._advance)
            self.matrix.value = sweep_html(self.results)
        finally:
            self.run_button.disabled = False

    def click(self) -> None:
        self.run_button.click()
