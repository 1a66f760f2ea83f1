"""Views: what readers look at. They read results, snapshots and traces, nothing else.

Workers never import anything from here. The `show_*` functions display HTML in a notebook
(each refuses a wrong argument in one line, before it draws anything); the panels
(`CrashPanel`, `SweepPanel`, `StepPanel`) are ipywidgets.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from labkit.bench.errors import check_instance, check_items
from labkit.bench.snapshot import Snapshot, snapshot_folder
from labkit.studies.commit_window.receiver import Delivery
from labkit.studies.commit_window.runs import RunResult
from labkit.studies.commit_window.tool_runs import ToolRun
from labkit.views import tables

__all__ = [
    "show_deliveries",
    "show_folder",
    "show_html",
    "show_orders",
    "show_run",
    "show_snapshot",
    "show_study_table",
    "show_sweep",
    "show_timeline",
    "show_tool_run",
]

RESULT = "run_result"  # codes of cli.expected: what a view was meant to be given
RESULTS = "run_results"
SNAPSHOT = "snapshot"


def show_html(html: str) -> None:
    """Display HTML in the notebook (IPython is imported here, so the CLI's text views never
    pay for it)."""
    from IPython.display import HTML, display

    display(HTML(html))


def show_orders() -> None:
    """The four write orders and their kill points."""
    show_html(tables.orders_html())


def show_deliveries(answers: Sequence, held: Snapshot) -> None:
    """A receiver's answers, then the receipts it holds."""
    check_items("answers", answers, Delivery, "delivered_answers")
    check_instance("held", held, Snapshot, "delivered_snapshot")
    show_html(tables.deliveries_html(answers) + tables.snapshot_html(held))


def show_snapshot(snapshot: Snapshot) -> None:
    """Every table of every file in a snapshot."""
    check_instance("snapshot", snapshot, Snapshot, SNAPSHOT)
    show_html(tables.snapshot_html(snapshot))


def show_folder(run_dir: str | Path) -> None:
    """Every table of every SQLite file in a run folder, read now through a read-only connection."""
    show_snapshot(snapshot_folder(run_dir))


def show_run(result: RunResult) -> None:
    """The outcome, then every table of every file before and after recovery."""
    check_instance("result", result, RunResult, RESULT)
    show_html(tables.run_html(result))


def show_study_table(results: Sequence[RunResult]) -> None:
    """Study 000's table, one line per real run."""
    check_items("results", results, RunResult, RESULTS)
    show_html(tables.study_table_html(results))


def show_sweep(results: Sequence[RunResult]) -> None:
    """The sweep as a matrix of outcomes: orders down, kill points across."""
    check_items("results", results, RunResult, RESULTS)
    show_html(tables.sweep_html(results))


def show_tool_run(result: ToolRun) -> None:
    """A tool step's run (run_tool_step): the outcome, the files before and after recovery."""
    check_instance("result", result, ToolRun, "tool_run")
    show_html(tables.tool_run_html(result))


def show_timeline(result: RunResult) -> None:
    """The run's commit-window timeline, with a scrubber over its trace events."""
    from labkit.views.panel import TimelineView

    check_instance("result", result, RunResult, RESULT)
    view = TimelineView()
    view.show(result)
    from IPython.display import display

    display(view)
