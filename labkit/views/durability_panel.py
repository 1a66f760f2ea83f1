"""The durability panel: pick graphs, modes, slow checkpointer, kill moment and trials; Run.

By default it runs study 004's whole matrix: both graphs, the three modes, 4 kills each. The
trials run in the trial server, off the kernel's thread (`background.BackgroundJob`); Stop
interrupts the server's call as Ctrl-C does: its workers killed and reaped."""

from __future__ import annotations

import ipywidgets as widgets

from labkit.language import say
from labkit.studies.durability.experiment import (
    DURABILITY_MODES,
    GRAPHS,
    KILL_MOMENTS,
    DurabilitySpec,
    Trial,
    describe_checkpoints,
    run_trials,
)
from labkit.views.background import BackgroundJob, Report
from labkit.views.controls import pick_many, pick_one, run_button, slider
from labkit.views.durability import checkpoints_html, distribution_figure, trials_html
from labkit.views.figures import picture, show_picture

__all__ = ["DurabilityPanel"]


class DurabilityPanel(widgets.VBox):
    """Many real SIGKILLs inside a LangGraph node, and what each left behind."""

    def __init__(self, trials: int = 4) -> None:
        self.trials: list[Trial] = []
        self.error: Exception | None = None
        self.graphs = pick_many(say("durability_panel.graphs"), GRAPHS, rows=2)
        self.modes = pick_many(say("durability_panel.durability"), DURABILITY_MODES, rows=3)
        self.slow_ms = slider(say("durability_panel.slow_ms"), 0, 0, 500, step=50)
        self.kill_moment = pick_one(say("durability_panel.kill_when"), KILL_MOMENTS)
        self.count = slider(say("durability_panel.trials"), trials, 1, 50)
        self.run_button = run_button(say("durability_panel.run"))
        self.job = BackgroundJob(
            self, [self.run_button], unit=say("durability_panel.unit"), stoppable=True
        )
        self.progress = self.job.progress
        self.status = widgets.HTML(say("durability_panel.ready"))
        self.error_line = widgets.HTML()
        self.plot = picture("labkit-distribution")
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
                widgets.HBox([self.run_button, self.job.row]),
                self.status,
                self.error_line,
                self.plot,
                self.table,
                self.checkpoints,
            ]
        )
        self.add_class("labkit-durability-panel")

    def _on_run(self, _button: object = None) -> None:
        graphs, modes = self.graphs.value or GRAPHS, self.modes.value or DURABILITY_MODES
        slow_ms, count = self.slow_ms.value, self.count.value
        moments = {graph: self.moment_for(graph) for graph in graphs}

        def work(report: Report) -> list[Trial]:
            specs = [
                DurabilitySpec(graph, mode, slow_ms, moments[graph])
                for graph in graphs
                for mode in modes
            ]

            def advance(done: int, total: int, trial: Trial) -> None:
                line = say(
                    "durability_panel.progress",
                    mode=trial.spec.mode,
                    checkpoints=trial.checkpoints,
                    lines=trial.ledger_lines,
                )
                report(done, total, line)

            return run_trials(specs, count, progress=advance)

        kills = len(graphs) * len(modes) * count
        self.job.start(say("durability_panel.running", kills=kills), work, self.show)

    def show(self, trials: list[Trial]) -> None:
        self.trials = trials
        show_picture(self.plot, distribution_figure(trials))
        self.table.value = trials_html(trials)
        last = trials[-1]
        self.checkpoints.value = (
            f"<p>{say('durability_panel.last_trial', mode=last.spec.mode)}</p>"
            + checkpoints_html(describe_checkpoints(last))
        )

    def moment_for(self, graph: str) -> str:
        """The kill moment applies to the parallel graph; the linear one dies as `c` starts."""
        return self.kill_moment.value if graph == "parallel" else "target_starts"

    def click(self) -> None:
        """Same as clicking Run trials: they go on after it returns (`self.job.wait()`)."""
        self.run_button.click()
