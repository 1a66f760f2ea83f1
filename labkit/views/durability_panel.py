"""The durability panel: pick graphs, modes, slow checkpointer, kill moment and trials; Run.

By default it runs study 004's whole matrix: both graphs, the three modes, 4 kills each."""

from __future__ import annotations

import ipywidgets as widgets

from labkit.studies.durability.experiment import (
    DURABILITY_MODES,
    GRAPHS,
    KILL_MOMENTS,
    DurabilitySpec,
    Trial,
    describe_checkpoints,
    run_trials,
)
from labkit.views.durability import checkpoints_html, distribution_figure, trials_html
from labkit.views.figures import figure_png
from labkit.views.panel import shows_errors

__all__ = ["DurabilityPanel"]


class DurabilityPanel(widgets.VBox):
    """Many real SIGKILLs inside a LangGraph node, and what each left behind."""

    def __init__(self, trials: int = 4) -> None:
        self.trials: list[Trial] = []
        self.error: Exception | None = None
        self.graphs = widgets.SelectMultiple(
            options=list(GRAPHS), value=list(GRAPHS), rows=2, description="graphs"
        )
        self.modes = widgets.SelectMultiple(
            options=list(DURABILITY_MODES),
            value=list(DURABILITY_MODES),
            rows=3,
            description="durability",
        )
        self.slow_ms = widgets.IntSlider(
            value=0, min=0, max=500, step=50, description="slow ms", continuous_update=False
        )
        self.kill_moment = widgets.Dropdown(options=list(KILL_MOMENTS), description="kill when")
        self.count = widgets.IntSlider(
            value=trials, min=1, max=50, description="trials", continuous_update=False
        )
        self.run_button = widgets.Button(
            description="Run trials", button_style="primary", icon="play"
        )
        self.progress = widgets.IntProgress(value=0, min=0, max=1, description="kills")
        self.status = widgets.HTML("Each trial: SIGKILL inside the node, then a fresh recovery.")
        self.error_line = widgets.HTML()
        self.plot = widgets.Image(format="png")
        self.plot.add_class("labkit-distribution")
        self.plot.layout.display = "none"
        self.table = widgets.HTML()
        self.checkpoints = widgets.HTML()
        self.run_button.on_click(self._on_run)
        controls = widgets.VBox(
            [
                widgets.HBox([self.graphs, self.kill_moment]),
                widgets.HBox([self.modes, widgets.VBox([self.slow_ms, self.count])]),
            ]
        )
        super().__init__(
            [
                controls,
                widgets.HBox([self.run_button, self.progress]),
                self.status,
                self.error_line,
                self.plot,
                self.table,
                self.checkpoints,
            ]
        )
        self.add_class("labkit-durability-panel")

    def _advance(self, done: int, total: int, trial: Trial) -> None:
        self.progress.max, self.progress.value = total, done
        self.status.value = (
            f"{done}/{total}: {trial.spec.mode}, checkpoints at kill "
            f"{trial.checkpoints}, ledger {trial.ledger_lines}"
        )

    @shows_errors
    def _on_run(self, _button: object = None) -> None:
        self.run_button.disabled = True
        self.progress.value = 0
        try:
            specs = [
                DurabilitySpec(graph, mode, self.slow_ms.value, self.moment_for(graph))
                for graph in self.graphs.value or GRAPHS
                for mode in self.modes.value or DURABILITY_MODES
            ]
            self.trials = run_trials(specs, self.count.value, progress=self._advance)
            self.plot.value = figure_png(distribution_figure(self.trials))
            self.plot.layout.display = None
            self.table.value = trials_html(self.trials)
            last = self.trials[-1]
            self.checkpoints.value = (
                f"<p>The checkpoint file of the last trial "
                f"({last.spec.mode}) as the kill left it:</p>"
                + checkpoints_html(describe_checkpoints(last))
            )
        finally:
            self.run_button.disabled = False

    def moment_for(self, graph: str) -> str:
        """The kill moment applies to the parallel graph; the linear one dies as `c` starts."""
        return self.kill_moment.value if graph == "parallel" else "target_starts"

    def click(self) -> None:
        self.run_button.click()
