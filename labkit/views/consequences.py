"""The view of the durability modes by their consequences (lesson 4): per mode, what the
lesson's kills lost and repeated, what a node cost, and a day of the reader's workload; a panel
whose three fields change the workload and redraw the table (arithmetic: nothing runs)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import ipywidgets as widgets
from IPython.display import HTML, display

from labkit.language import say
from labkit.studies.durability.consequences import (
    MAX_RUNS,
    MAX_STEPS,
    ModeMeasured,
    Workload,
    per_day,
)
from labkit.views.panel import shows_errors
from labkit.views.tables import grid_html, headers

__all__ = ["ConsequencesPanel", "consequences_html", "show_consequences"]

COLUMNS = ("mode", "lost", "repeats", "ms_local", "ms_slow", "crashes", "runs_lost")
COLUMNS += ("repeated", "orphaned", "hours_local", "hours_slow")
SLOW_MS = 250  # the lesson's slow checkpointer


def consequences_html(measured: Sequence[ModeMeasured], workload: Workload) -> str:
    """A row per mode: the kills' averages, a node's cost, then the workload's day."""
    rows = []
    for m in measured:
        day = per_day(m, workload)
        rows.append(
            [
                m.mode,
                say("consequences.lost_of", lost=m.lost, kills=m.kills),
                f"{m.repeats_per_crash:.2f}",
                f"{m.seconds_per_node.get(0, float('nan')) * 1000:.1f}",
                f"{m.seconds_per_node.get(SLOW_MS, float('nan')) * 1000:.1f}",
                f"{day.crashes:.1f}",
                f"{day.runs_lost:.1f}",
                f"{day.nodes_repeated:.1f}",
                f"{day.effects_orphaned:.1f}",
                f"{day.hours.get(0, float('nan')):.2f}",
                f"{day.hours.get(SLOW_MS, float('nan')):.2f}",
            ]
        )
    header = headers("consequences.column", COLUMNS)
    return grid_html(header, rows)


def workload_line(workload: Workload) -> str:
    return say(
        "consequences.workload",
        steps=workload.steps,
        runs=workload.runs_per_day,
        rate=workload.crash_rate,
    )


def show_consequences(measured: Sequence[ModeMeasured], workload: Workload) -> None:
    print(workload_line(workload))
    display(HTML(consequences_html(measured, workload)))


class ConsequencesPanel(widgets.VBox):
    """Three fields for the workload; the table follows them."""

    def __init__(self, measured: Sequence[ModeMeasured], workload: Workload | None = None):
        start = workload or Workload()
        self.measured = list(measured)
        self.steps = widgets.BoundedIntText(
            start.steps, min=1, max=MAX_STEPS, description=say("consequences.field.steps")
        )
        self.runs = widgets.BoundedIntText(
            start.runs_per_day, min=0, max=MAX_RUNS, description=say("consequences.field.runs")
        )
        self.rate = widgets.BoundedFloatText(
            start.crash_rate, min=0, max=1, step=0.001, description=say("consequences.field.rate")
        )
        style = {"description_width": "initial"}
        for field in (self.steps, self.runs, self.rate):
            field.style = style
            field.observe(self.redraw, names="value")
        self.table, self.error_line = widgets.HTML(), widgets.HTML()
        fields = widgets.HBox([self.steps, self.runs, self.rate])
        super().__init__([fields, self.table, self.error_line])
        self.redraw()

    @property
    def workload(self) -> Workload:
        return Workload(self.steps.value, self.runs.value, self.rate.value)

    @shows_errors
    def redraw(self, change: object = None) -> None:
        workload = self.workload
        self.table.value = (
            f"<p>{escape(workload_line(workload))}</p>{consequences_html(self.measured, workload)}"
        )
