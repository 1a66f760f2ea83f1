"""Lesson 7's study 004 on three checkpointers side by side: what a kill left on each
(the matrix), the node writes issue #8039 re-runs, and the real put() latencies against the
study's 250 ms stand-in. matplotlib and IPython load only where a figure is drawn or shown."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from labkit.bench.errors import check_instance, check_items
from labkit.language import say
from labkit.language.failures import failure_text
from labkit.studies.durability.experiment import Trial
from labkit.views.palette import KILL_COLOUR, NEUTRAL
from labkit.views.postgres_tables import header, rows_html, show

if TYPE_CHECKING:
    from matplotlib.figure import Figure

STUDY_MS = 250  # study 004's stand-in for "a network checkpointer (Postgres or a hosted service)"
TRIALS = "checkpointer_trials"  # a code of cli.expected


def stub_versus_text(median_ms: float) -> str:
    """How many times a median put() on this Postgres study 004's 250 ms stand-in is."""
    return say("postgres.lines.stub_versus", stub=STUDY_MS, times=STUDY_MS / median_ms)


def setup_name(trial: Trial) -> str:
    """sqlite, stub 250 ms (the study's slow SQLite), or postgres."""
    slow = f" {trial.spec.slow_ms} ms" if trial.spec.slow_ms else ""
    stub = trial.spec.checkpointer == "sqlite" and slow
    return (say("postgres.stub") if stub else trial.spec.checkpointer) + slow


def matrix_columns(trials: Sequence[Trial]) -> tuple[str, ...]:
    names = dict.fromkeys(setup_name(t) for t in check_items("trials", trials, Trial, TRIALS))
    return (say("postgres.column.graph"), say("postgres.column.mode"), *names)


def matrix_rows(trials: Sequence[Trial]) -> list[tuple]:
    """One row per graph and mode, one column per checkpointer: for each trial, the
    checkpoints the kill left, and which nodes ran twice (or that nothing could resume)."""
    columns = matrix_columns(trials)[2:]
    cells: dict[tuple[str, str], dict[str, list[str]]] = {}
    for t in trials:
        if t.failure:
            said = say("postgres.failed")
        elif not t.resumed:
            said = say("postgres.ckpt_lost", checkpoints=t.checkpoints)
        else:
            nodes = " ".join(t.rerun_nodes) or "-"
            said = say("postgres.ckpt_again", checkpoints=t.checkpoints, nodes=nodes)
        row = cells.setdefault((t.spec.graph, t.spec.mode), {name: [] for name in columns})
        row[setup_name(t)].append(said)
    semicolon = say("text.semicolon")
    return [
        (g, m, *(semicolon.join(row[c]) or "-" for c in columns)) for (g, m), row in cells.items()
    ]


def latency_rows(latencies: Mapping[str, Sequence[float]]) -> list[tuple]:
    """Per checkpointer: how many put() calls, their median, 90th percentile and maximum, and
    how the median compares with the study's 250 ms."""
    check_instance("latencies", latencies, Mapping, "put_latencies")
    rows = []
    for name, times in latencies.items():
        ordered = sorted(times)
        if not ordered:
            rows.append((name, 0, "-", "-", "-", "-"))
            continue
        median = statistics.median(ordered)
        p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
        ratio = STUDY_MS / median
        versus = (
            say("postgres.faster", ratio=ratio)
            if ratio >= 1.5
            else say("postgres.share", share=median / STUDY_MS)
        )
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
            say("postgres.failed") if t.failure else t.writes,
            (failure_text(t.failure) if t.failure else "")
            or " ".join(t.rerun_nodes)
            or say("postgres.nothing"),
        )
        for t in check_items("trials", trials, Trial, TRIALS)
    ]


def latency_figure(latencies: Mapping[str, Sequence[float]]) -> Figure:
    """Every put() as a dot, one row per checkpointer, on a log scale, with the study's 250 ms
    as a line: where the real distribution sits against the stand-in."""
    from labkit.views.figures import new_figure

    check_instance("latencies", latencies, Mapping, "put_latencies")
    fig = new_figure((8, 0.7 * len(latencies) + 1.4))
    ax = fig.subplots()
    for y, times in enumerate(latencies.values()):
        spread = [y + 0.15 * ((i % 7) - 3) / 3 for i in range(len(times))]
        ax.plot(times, spread, "o", ms=4, alpha=0.6, color=NEUTRAL)
        if times:
            ax.plot([statistics.median(times)] * 2, [y - 0.3, y + 0.3], color="black", lw=2)
    ax.axvline(STUDY_MS, color=KILL_COLOUR, ls="--", label=say("postgres.stand_in"))
    ax.set_xscale("log")
    ax.set_yticks(range(len(latencies)))
    ax.set_yticklabels(list(latencies))
    ax.set_xlabel(say("postgres.put_time"))
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


def show_matrix(trials: Sequence[Trial]) -> None:
    show(rows_html(matrix_columns(trials), matrix_rows(trials)))


def show_reruns(trials: Sequence[Trial]) -> None:
    show(rows_html(header("rerun"), rerun_rows(trials)))


def show_latencies(latencies: Mapping[str, Sequence[float]]) -> None:
    from IPython.display import Image, display

    from labkit.views.figures import figure_png

    show(rows_html(header("latency"), latency_rows(latencies)))
    display(Image(figure_png(latency_figure(latencies))))
