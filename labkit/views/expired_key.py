"""The view of a key that expired (lesson 2's last part): a row per crash and its recovery,
how late it came, how long the receiver kept keys, the receipts before and after."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from IPython.display import HTML, display

from labkit.language import say
from labkit.studies.commit_window.expired_key import HOUR, ExpiredKeyRun
from labkit.views.tables import CELL, failure_note, outcome_word

__all__ = ["expired_keys_html", "show_expired_keys"]

COLUMNS = ("delay", "ttl", "before", "after", "outcome")


def expired_keys_html(runs: Sequence[ExpiredKeyRun]) -> str:
    """One row per run; the outcome in study 000's words, on its colour."""
    header = "".join(
        f'<th style="{CELL}">{escape(say(f"expired_key.column.{c}"))}</th>' for c in COLUMNS
    )
    rows = []
    for run in runs:
        hours = (
            say("expired_key.hours", hours=run.delay / HOUR),
            say("expired_key.hours", hours=run.ttl / HOUR),
        )
        values = (*hours, run.before.receipts, run.after.receipts)
        cells = "".join(f'<td style="{CELL}">{escape(str(v))}</td>' for v in values)
        outcome = f'<td style="{CELL}">{outcome_word(run.outcome)}{failure_note(run.failure)}</td>'
        rows.append(f"<tr>{cells}{outcome}</tr>")
    return f'<table style="border-collapse:collapse"><tr>{header}</tr>{"".join(rows)}</table>'


def show_expired_keys(runs: Sequence[ExpiredKeyRun]) -> None:
    display(HTML(expired_keys_html(runs)))
