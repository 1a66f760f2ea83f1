"""Lesson 7's tables, whatever they hold: each one's columns in the reader's language, and one
set of rows shown as text (the CLI) or HTML (a notebook), an outcome cell on its colour."""

from __future__ import annotations

from collections.abc import Sequence

from labkit.studies.postgres.spec import OUTCOMES
from labkit.views.commit_window_words import outcome_name
from labkit.views.tables import grid_html, headers, outcome_word
from labkit.views.text import format_grid

# Each table's columns, by their keys in the catalogue ("postgres.column.<key>").
COLUMNS = {
    "window": ("order", "killed_at", "at_kill", "after", "outcome"),
    "race": ("lock", "waited_at", "first", "second", "receipts", "outcome"),
    "crash": ("crashed_when", "postgres_showed", "commit_returned", "order_3", "rows_after"),
    "rerun": ("checkpointer", "writes_delay", "writes_rows", "ran_again"),
    "latency": ("checkpointer", "put_calls", "median", "p90", "max", "versus"),
}
# Where the client's last transaction stands at each crash point (postgres_panel.toml, whose


def header(table: str) -> tuple[str, ...]:
    """The header of one of the COLUMNS' tables, in the reader's language."""
    return tuple(headers("postgres.column", COLUMNS[table]))


def format_rows(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A table for a terminal."""
    return format_grid(columns, rows)


def rows_html(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A table for a notebook; an outcome cell shows its word on its colour."""
    html = grid_html(columns, rows)
    for outcome in OUTCOMES:
        html = html.replace(f">{outcome_name(outcome)}</td>", f">{outcome_word(outcome)}</td>")
    return html


def show(html: str) -> None:
    from IPython.display import HTML, display

    display(HTML(html))
