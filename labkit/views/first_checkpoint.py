"""Lesson 8's first-checkpoint distribution: what a durability mode's file held when the first
node was killed, over many trials, as a table, a figure, and a panel that runs them with a bar.

matplotlib and ipywidgets are loaded only by the figure and the panel.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from labkit.language import say
from labkit.studies.retries.experiment import first_checkpoint_modes
from labkit.studies.retries.spec import FIRST_MODES
from labkit.views.figures import figure_png, new_figure, picture, show_picture
from labkit.views.palette import outcome_colour
from labkit.views.retries_words import FIRST_COLUMNS, SAVED, SAVED_COLOURS, header, saved_word, show
from labkit.views.tables import grid_html
from labkit.views.text import format_grid


def first_checkpoint_rows(results: Mapping[str, Mapping]) -> list[tuple]:
    """One row per mode under FIRST_COLUMNS (a mode's trials that failed are counted apart)."""
    return [
        (
            mode,
            r["trials"] - r["failed"],
            *(r["saved"].get(word, 0) for word in SAVED),
            say("retries.first.lost_of", lost=r["lost"], trials=r["trials"] - r["failed"]),
            say("retries.first.took", seconds=r["seconds"]),
        )
        for mode, r in results.items()
    ]


def format_first_checkpoint(results: Mapping[str, Mapping]) -> str:
    grid = format_grid(header(FIRST_COLUMNS), first_checkpoint_rows(results))
    failed = sum(r["failed"] for r in results.values())
    note = "\n" + say("retries.first.failed", failed=failed) if failed else ""
    return f"{grid}\n{say('retries.first.lost')}{note}"


def first_checkpoint_figure(results: Mapping[str, Mapping]) -> object:
    """One bar per mode: how many trials' files held nothing, the input checkpoint, or the
    input and step 0's, when the first node was killed; each part labelled with its count."""
    figure = new_figure((7, 0.9 + 0.55 * len(results)))
    ax = figure.subplots()
    modes = list(results)
    for y, mode in enumerate(modes):
        left = 0
        for word in SAVED:
            count = results[mode]["saved"].get(word, 0)
            if count:
                colour = outcome_colour(SAVED_COLOURS[word])
                ax.barh(y, count, left=left, color=colour, edgecolor="white")
                wide = count >= results[mode]["trials"] / 8
                label = f"{saved_word(word)} {count}" if wide else str(count)
                ax.text(left + count / 2, y, label, ha="center", va="center", fontsize=8)
            left += count
    lost = [say("retries.first.lost_count", lost=results[m]["lost"]) for m in modes]
    ax.set_yticks(range(len(modes)), [f"{m}\n{n}" for m, n in zip(modes, lost, strict=True)])
    ax.invert_yaxis()
    ax.set_xlabel(say("retries.first.held"))
    ax.spines[["top", "right"]].set_visible(False)
    figure.tight_layout()
    return figure


def show_first_checkpoint(results: Mapping[str, Mapping]) -> None:
    """The distribution's table and its figure, in the notebook."""
    from IPython.display import Image, display

    show(grid_html(header(FIRST_COLUMNS), first_checkpoint_rows(results)))
    display(Image(figure_png(first_checkpoint_figure(results))))


@functools.cache
def panel_class() -> type:
    """The panel's class, made on first use: ipywidgets loads only when a notebook asks."""
    import ipywidgets as widgets

    from labkit.views.background import BackgroundJob, Report
    from labkit.views.controls import pick_many, run_button, slider

    class FirstCheckpointPanel(widgets.VBox):
        """Pick the modes and the trials, click Run, watch the bar (or Stop), read the figure."""

        def __init__(self, trials: int = 200) -> None:
            self.results: dict[str, dict] = {}
            self.error: Exception | None = None
            self.modes = pick_many(say("retries.panel.modes"), FIRST_MODES, rows=3)
            self.trials = slider(say("retries.panel.trials"), trials, 10, 500, step=10)
            self.run_button = run_button(say("retries.panel.run"))
            self.status, self.error_line, self.table = (
                widgets.HTML(),
                widgets.HTML(),
                widgets.HTML(),
            )
            self.figure = picture()
            self.job = BackgroundJob(
                self, [self.run_button], unit=say("retries.panel.unit"), stoppable=True
            )
            self.progress = self.job.progress
            self.run_button.on_click(self._on_run)
            controls = widgets.HBox([self.modes, widgets.VBox([self.trials, self.run_button])])
            parts = [controls, self.job.row, self.status, self.error_line, self.table, self.figure]
            super().__init__(parts)
            self.add_class("labkit-first-checkpoint-panel")

        def _on_run(self, _button: object = None) -> None:
            modes, trials = self.modes.value or FIRST_MODES, self.trials.value

            def work(report: Report) -> dict[str, dict]:
                def advance(done: int, total: int, trial: dict) -> None:
                    held = say("retries.panel.held", saved=saved_word(trial["saved"]))
                    report(done, total, held)

                return first_checkpoint_modes(tuple(modes), trials, progress=advance)

            what = say("retries.panel.running", trials=trials, modes=", ".join(modes))
            self.job.start(what, work, self.show)

        def show(self, results: dict[str, dict]) -> None:
            self.results = results
            self.table.value = grid_html(header(FIRST_COLUMNS), first_checkpoint_rows(results))
            show_picture(self.figure, first_checkpoint_figure(results))

        def click(self) -> None:
            """Same as clicking Run trials (`self.job.wait()` waits for the end)."""
            self.run_button.click()

    return FirstCheckpointPanel
