"""Views of lesson 7: the commit window and the race on Postgres, the database's own crash, and
study 004's matrix on three checkpointers side by side with the real put() latencies.

Each table is built once as rows (`*_rows`) and shown as text (the CLI) or HTML (a notebook);
an outcome always carries its word. The timeline is the bench's, drawn from the workers' trace.
matplotlib and IPython load only where a figure is drawn or shown: the CLI's tables stay quick.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING

from labkit.bench.errors import check_instance, check_items
from labkit.studies.durability.experiment import Trial
from labkit.studies.postgres.spec import CrashResult, RaceResult, WindowResult
from labkit.views.palette import KILL_COLOUR, NEUTRAL, outcome_colour
from labkit.views.tables import grid_html, outcome_word
from labkit.views.text import format_grid

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "CRASH_COLUMNS",
    "LATENCY_COLUMNS",
    "RACE_COLUMNS",
    "RERUN_COLUMNS",
    "WINDOW_COLUMNS",
    "crash_rows",
    "format_rows",
    "latency_figure",
    "latency_rows",
    "matrix_columns",
    "matrix_rows",
    "race_rows",
    "rerun_rows",
    "rows_html",
    "setup_name",
    "show_crashes",
    "show_latencies",
    "show_matrix",
    "show_races",
    "show_reruns",
    "show_timeline",
    "show_windows",
    "window_rows",
]

STUDY_MS = 250  # study 004's stand-in for "a network checkpointer (Postgres or a hosted service)"
WINDOW_COLUMNS = ("order", "killed at", "at the kill: done/receipts", "after recovery", "outcome")
RACE_COLUMNS = ("lock", "the second waited at", "first", "second", "receipts", "outcome")
CRASH_COLUMNS = (
    "server SIGKILLed when",
    "Postgres showed the client",
    "the client's COMMIT returned",
    "order-3 after restart",
    "rows after restart",
)
RERUN_COLUMNS = ("checkpointer", "put_writes() delay", "writes rows at the kill", "ran again")
LATENCY_COLUMNS = ("checkpointer", "put() calls", "median ms", "p90 ms", "max ms", "vs 250 ms")
WINDOWS = "a list of WindowResult (what run_window or window_sweep returns)"
RACES = "a list of RaceResult (what run_race returns)"
CRASHES = "a list of CrashResult (what run_crash or crash_sweep returns)"
TRIALS = "a list of Trial (what checkpointer_matrix returns)"


def window_rows(results: Sequence[WindowResult]) -> list[tuple]:
    def pair(counts: dict) -> str:
        return f"{counts['done']}/{counts['receipts']}"

    return [
        (r.spec.order, r.spec.kill_at, pair(r.before), pair(r.after), r.failure or r.outcome)
        for r in check_items("results", results, WindowResult, WINDOWS)
    ]


def race_rows(results: Sequence[RaceResult]) -> list[tuple]:
    return [
        (
            r.spec.lock,
            r.reports["second_waited_at"] or "nowhere",
            r.reports["first"],
            r.reports["second"],
            r.receipts,
            r.failure or r.outcome,
        )
        for r in check_items("results", results, RaceResult, RACES)
    ]


def crash_rows(results: Sequence[CrashResult]) -> list[tuple]:
    def seen(shown: dict) -> str:
        waiting = f", waiting on {shown['wait_event']}" if shown.get("wait_event") else ""
        return f"{shown.get('state')}: {shown.get('query')}{waiting}" if shown else "-"

    return [
        (
            r.spec.point,
            seen(r.seen_in_flight),
            r.client_saw,
            "SURVIVED" if r.in_flight_survived else "gone",
            ", ".join(r.survived),
        )
        for r in check_items("results", results, CrashResult, CRASHES)
    ]


def setup_name(trial: Trial) -> str:
    """sqlite, stub 250 ms (the study's slow SQLite), or postgres."""
    slow = f" {trial.spec.slow_ms} ms" if trial.spec.slow_ms else ""
    stub = trial.spec.checkpointer == "sqlite" and slow
    return ("stub" if stub else trial.spec.checkpointer) + slow


def matrix_columns(trials: Sequence[Trial]) -> tuple[str, ...]:
    names = dict.fromkeys(setup_name(t) for t in check_items("trials", trials, Trial, TRIALS))
    return ("graph", "mode", *names)


def matrix_rows(trials: Sequence[Trial]) -> list[tuple]:
    """One row per graph and mode, one column per checkpointer: for each trial, the
    checkpoints the kill left, and which nodes ran twice (or that nothing could resume)."""
    columns = matrix_columns(trials)[2:]
    cells: dict[tuple[str, str], dict[str, list[str]]] = {}
    for t in trials:
        if t.failure:
            said = "FAILED"
        elif not t.resumed:
            said = f"{t.checkpoints} ckpt, lost"
        else:
            said = f"{t.checkpoints} ckpt, again: {' '.join(t.rerun_nodes) or '-'}"
        row = cells.setdefault((t.spec.graph, t.spec.mode), {name: [] for name in columns})
        row[setup_name(t)].append(said)
    return [(g, m, *("; ".join(row[c]) or "-" for c in columns)) for (g, m), row in cells.items()]


def latency_rows(latencies: Mapping[str, Sequence[float]]) -> list[tuple]:
    """Per checkpointer: how many put() calls, their median, 90th percentile and maximum, and
    how the median compares with the study's 250 ms."""
    check_instance("latencies", latencies, Mapping, "a dict of name: put() times in ms")
    rows = []
    for name, times in latencies.items():
        ordered = sorted(times)
        if not ordered:
            rows.append((name, 0, "-", "-", "-", "-"))
            continue
        median = statistics.median(ordered)
        p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
        ratio = STUDY_MS / median
        versus = f"{ratio:.0f}x faster" if ratio >= 1.5 else f"{median / STUDY_MS:.2f}x of it"
        figures = (f"{median:.1f}", f"{p90:.1f}", f"{ordered[-1]:.1f}")
        rows.append((name, len(ordered), *figures, versus))
    return rows


def rerun_rows(trials: Sequence[Trial]) -> list[tuple]:
    """Issue #8039: per trial killed as put() starts saving the checkpoint after b, the node
    writes saved by then, and which finished nodes ran again."""
    return [
        (
            t.spec.checkpointer,
            f"{t.spec.writes_delay_ms} ms",
            "FAILED" if t.failure else t.writes,
            t.failure or " ".join(t.rerun_nodes) or "nothing",
        )
        for t in check_items("trials", trials, Trial, TRIALS)
    ]


def format_rows(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A table for a terminal."""
    return format_grid(columns, rows)


def rows_html(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A table for a notebook; an outcome cell shows its word on its colour."""
    html = grid_html(columns, rows)
    for outcome in ("consistent", "duplicate", "lost"):
        html = html.replace(f">{outcome}</td>", f">{outcome_word(outcome)}</td>")
    return html


def latency_figure(latencies: Mapping[str, Sequence[float]]) -> Figure:
    """Every put() as a dot, one row per checkpointer, on a log scale, with the study's 250 ms
    as a line: where the real distribution sits against the stand-in."""
    from matplotlib.figure import Figure

    check_instance("latencies", latencies, Mapping, "a dict of name: put() times in ms")
    fig = Figure(figsize=(8, 0.7 * len(latencies) + 1.4))
    ax = fig.subplots()
    for y, times in enumerate(latencies.values()):
        spread = [y + 0.15 * ((i % 7) - 3) / 3 for i in range(len(times))]
        ax.plot(times, spread, "o", ms=4, alpha=0.6, color=NEUTRAL)
        if times:
            ax.plot([statistics.median(times)] * 2, [y - 0.3, y + 0.3], color="black", lw=2)
    ax.axvline(STUDY_MS, color=KILL_COLOUR, ls="--", label="study 004's stand-in: 250 ms")
    ax.set_xscale("log")
    ax.set_yticks(range(len(latencies)))
    ax.set_yticklabels(list(latencies))
    ax.set_xlabel("put() time, ms (log scale); a black bar marks the median")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


# --- in a notebook


def show(html: str) -> None:
    from IPython.display import HTML, display

    display(HTML(html))


def show_windows(results: Sequence[WindowResult]) -> None:
    show(rows_html(WINDOW_COLUMNS, window_rows(results)))


def show_races(results: Sequence[RaceResult]) -> None:
    show(rows_html(RACE_COLUMNS, race_rows(results)))


def show_crashes(results: Sequence[CrashResult]) -> None:
    rows = crash_rows(results)
    html = rows_html(CRASH_COLUMNS, rows).replace(
        ">SURVIVED<", f'><b style="color:{outcome_colour("consistent")}">SURVIVED</b><'
    )
    logs = {r.spec.point: r.recovery_log for r in results}
    point, log = next(iter(logs.items()))
    note = (
        f"<p>The restarted server's own words after the crash at <code>{escape(point)}</code>:"
        f"</p><pre>{escape(chr(10).join(log))}</pre>"
    )
    show(html + note)


def show_matrix(trials: Sequence[Trial]) -> None:
    show(rows_html(matrix_columns(trials), matrix_rows(trials)))


def show_reruns(trials: Sequence[Trial]) -> None:
    show(rows_html(RERUN_COLUMNS, rerun_rows(trials)))


def show_latencies(latencies: Mapping[str, Sequence[float]]) -> None:
    from IPython.display import Image, display

    from labkit.views.figures import figure_png

    show(rows_html(LATENCY_COLUMNS, latency_rows(latencies)))
    display(Image(figure_png(latency_figure(latencies))))


def show_timeline(result: WindowResult) -> None:
    """The bench's commit-window timeline, drawn from the run's trace: one lane per session."""
    from IPython.display import Image, display

    from labkit.views.timeline import TimelineFigure

    check_instance("result", result, WindowResult, "a WindowResult (what run_window returns)")
    display(Image(TimelineFigure(result.events).png(None)))
