"""Views: what readers look at. They read results, snapshots and traces, nothing else.

Workers never import anything from here. The `show_*` functions display in a notebook.
"""

from __future__ import annotations

from collections.abc import Sequence

from IPython.display import HTML, display

from labkit.runs import RunResult
from labkit.views import tables

__all__ = ["show_run", "show_study_table", "show_sweep"]


def show_run(result: RunResult) -> None:
    """The outcome, then every table of every file before and after recovery."""
    display(HTML(tables.run_html(result)))


def show_study_table(results: Sequence[RunResult]) -> None:
    """Study 000's table, one line per real run."""
    display(HTML(tables.study_table_html(results)))


def show_sweep(results: Sequence[RunResult]) -> None:
    """The sweep as a matrix of outcomes: orders down, kill points across."""
    display(HTML(tables.sweep_html(results)))
