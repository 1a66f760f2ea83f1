"""Lesson 6's race: what it left (the task row, the receiver's applied and refused writes, the
outcome in words), the sweep as a matrix, and the timeline with a lane per worker. Text for the
terminal (`format_*`), HTML for a notebook (`*_html`)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

from labkit.bench.errors import check_items
from labkit.language import say
from labkit.language.failures import failure_text
from labkit.studies.leases.experiment import ClaimResult, check_result
from labkit.studies.leases.outcome import OUTCOMES
from labkit.studies.leases.spec import METHODS
from labkit.views import show_html
from labkit.views.figures import figure_png
from labkit.views.lanes_drawing import draw
from labkit.views.lease_timeline import claim_timeline
from labkit.views.leases_words import (
    badge,
    columns,
    legend_lines,
    outcome_html,
    outcome_text,
    said,
)
from labkit.views.tables import CELL, grid_html, snapshot_html
from labkit.views.text import format_grid, format_snapshot, how_it_ended, process_exits

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn, not here
    from matplotlib.figure import Figure

__all__ = [
    "CLAIM_COLUMNS",
    "claim_html",
    "claim_rows",
    "claim_sweep_html",
    "format_claim",
    "format_claim_sweep",
    "refusal_text",
    "show_claim",
    "show_claim_sweep",
    "show_claim_timeline",
    "timeline_figure",
]

RACE_COLUMNS = ("w1", "w2", "applied", "refused", "document")  # what one race did
CLAIM_COLUMNS = ("method", "pause", "lease", *RACE_COLUMNS)  # and under which schedule
RESULTS = "claim_results"  # a code of cli.expected


def worker_text(report: dict, exit_code: int | None = None) -> str:
    """What one worker did, in a few words: its claim's token, its write, its done mark; or
    how it ended, when it was killed before it could say (`exit_code`)."""
    if not report:
        killed = exit_code is not None and exit_code < 0
        return how_it_ended(exit_code) if killed else say("leases.worker.no_report")
    if not report.get("claimed"):
        return say("leases.worker.claim_refused")
    text = say("leases.worker.token", fence=report["fence"])
    if report.get("renewed") is False:
        return text + say("leases.worker.gave_up")
    if "applied" in report:
        text += say(
            "leases.worker.write_applied" if report["applied"] else "leases.worker.write_refused"
        )
        text += say("leases.worker.done" if report.get("done") else "leases.worker.not_done")
    return text


def claim_rows(results: Sequence[ClaimResult]) -> list[tuple]:
    """One row per race under CLAIM_COLUMNS, for text and HTML alike."""
    rows = []
    for r in results:
        schedule = (
            r.spec.method,
            say("leases.race.ms", ms=r.spec.pause_ms),
            say("leases.race.ms", ms=r.spec.lease_ms),
        )
        rows.append((*schedule, *race_row(r)))
    return rows


def race_row(r: ClaimResult) -> tuple:
    """What a race did, under RACE_COLUMNS: each worker, the writes, the document's author."""
    document = r.after.table("document").rows[0]
    exits = r.summary()["exits"]
    return (
        worker_text(r.reports.get("w1", {}), exits.get("w1")),
        worker_text(r.reports.get("w2", {}), exits.get("w2")),
        r.counts["applied"],
        r.counts["refused"],
        say("leases.race.document", worker=document[2], fence=document[3]),
    )


def schedule(r: ClaimResult, key: str = "schedule") -> str:
    """When w1 claims and is frozen, and when w2 arrives."""
    return say(
        f"leases.race.{key}",
        lease=r.spec.lease_ms,
        stop=r.stop_at,
        pause=r.spec.pause_ms,
        arrival=r.spec.arrival_ms,
    )


def refusal_text(writer: str, token: int, highest: int) -> str:
    """A refused write in one sentence, from a row of the receiver's `refused` log: who came
    back with which token, and the highest token the receiver had accepted by then."""
    return say("leases.race.refused_write", writer=writer, token=token, highest=highest)


def format_claim(result: ClaimResult) -> str:
    """One race: the schedule, how each worker ended, the outcome, the files."""
    r = check_result(result)
    lines = [
        method_line(r.spec.method),
        f"  {schedule(r)}",
        f"  {say('leases.race.processes', exits=process_exits(r.summary()['exits']))}",
        f"  {outcome_text(r.outcome)}",
        *([f"  {say('leases.race.why', failure=failure_text(r.failure))}"] if r.failure else []),
        f"  {say('leases.race.run_folder', folder=r.run_dir)}",
        "",
        format_grid(columns(*RACE_COLUMNS), [race_row(r)]),  # the schedule is said above
    ]
    at_end = say("leases.race.files_at_end")
    return "\n".join(lines) + f"\n\n{at_end}\n\n" + format_snapshot(r.after)


def method_line(method: str) -> str:
    """A claim method and what it does, wrapped to a terminal's 100 columns."""
    said = say("text.meaning", word=method, meaning=METHODS[method])
    return textwrap.fill(said, width=100, subsequent_indent="  ")


def format_claim_sweep(results: Sequence[ClaimResult]) -> str:
    """Every race of a sweep, one line each with its word, and what each word means."""
    results = check_items("results", results, ClaimResult, RESULTS)
    rows = [(*row, said(r.outcome)) for r, row in zip(results, claim_rows(results), strict=True)]
    table = format_grid(columns(*CLAIM_COLUMNS, "outcome"), rows)
    legend = "\n".join(legend_lines([r.outcome for r in results]))
    return f"{table}\n\n{say('leases.race.outcomes')}\n{legend}"


def claim_html(result: ClaimResult) -> str:
    """A race: the outcome in words, its row, then every table of both files."""
    r = check_result(result)
    exits = escape(process_exits(r.summary()["exits"]))
    folder = say("leases.race.run_folder_html", folder=escape(str(r.run_dir)))
    return (
        f"<div><p><b>{r.spec.method}</b>: {escape(METHODS[r.spec.method])}<br>"
        f"{schedule(r, 'schedule_html')}<br>{say('leases.race.processes_html', exits=exits)}</p>"
        f"{outcome_html(r.outcome, r.failure)}"
        f"{grid_html(columns(*CLAIM_COLUMNS), claim_rows([r]))}{snapshot_html(r.after)}"
        f"<p style='color:#555'>{folder}</p></div>"
    )


def claim_sweep_html(results: Sequence[ClaimResult]) -> str:
    """The sweep as a matrix: methods down, pause × lease across, the outcome word in each."""
    results = check_items("results", results, ClaimResult, RESULTS)
    pairs = list(dict.fromkeys((r.spec.pause_ms, r.spec.lease_ms) for r in results))
    cells = {(r.spec.method, r.spec.pause_ms, r.spec.lease_ms): r for r in results}
    head = "".join(
        f'<th style="{CELL}">{say("leases.race.column", pause=p, lease=le)}</th>' for p, le in pairs
    )
    body = ""
    for method in [m for m in METHODS if any(k[0] == m for k in cells)]:
        row = f'<th style="{CELL}">{escape(method)}</th>'
        for pause, lease in pairs:
            r = cells.get((method, pause, lease))
            text = ""
            if r:
                text = (
                    f"{badge(r.outcome)}<br><small>{say('leases.race.counts', **r.counts)}</small>"
                )
            row += f'<td style="{CELL}">{text}</td>'
        body += f"<tr>{row}</tr>"
    meaning = "".join(
        f"<li>{badge(w)} {escape(OUTCOMES[w])}</li>"
        for w in dict.fromkeys(r.outcome for r in results)
    )
    return (
        f'<table style="border-collapse:collapse"><tr><th style="{CELL}">'
        f"{say('leases.columns.method')}</th>{head}</tr>"
        f'{body}</table><ul style="list-style:none;padding-left:0">{meaning}</ul>'
    )


# --- the timeline ---------------------------------------------------------------------------


def timeline_figure(result: ClaimResult) -> Figure:
    """The race's timeline (`lease_timeline`), under its method and outcome."""
    r = check_result(result)
    title = say("text.meaning", word=r.spec.method, meaning=said(r.outcome))
    return draw(claim_timeline(r, title))[0]


# --- in a notebook --------------------------------------------------------------------------


def show_claim(result: ClaimResult) -> None:
    """A race: the outcome in words, its row, both files."""
    show_html(claim_html(result))


def show_claim_sweep(results: Sequence[ClaimResult]) -> None:
    """Every method × pause × lease as a matrix of outcome words."""
    show_html(claim_sweep_html(results))


def show_claim_timeline(result: ClaimResult) -> None:
    """The race's timeline: a lane per worker, the leases and the pause on the lab's clock."""
    from IPython.display import Image, display

    display(Image(figure_png(timeline_figure(check_result(result)))))
