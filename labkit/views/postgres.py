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
from labkit.language import Messages, say
from labkit.studies.commit_window.outcome import outcome_name
from labkit.studies.durability.experiment import Trial
from labkit.studies.postgres.spec import (
    CRASH_POINTS,
    LOCKS,
    OUTCOMES,
    WINDOW_ORDERS,
    CrashResult,
    RaceResult,
    WindowResult,
)
from labkit.views.palette import KILL_COLOUR, NEUTRAL, outcome_colour
from labkit.views.tables import grid_html, outcome_word
from labkit.views.text import format_grid

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "COLUMNS",
    "CRASH_MEANINGS",
    "crashes_html",
    "crash_points_text",
    "crash_rows",
    "format_rows",
    "guard_text",
    "header",
    "latency_figure",
    "latency_rows",
    "locks_text",
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
    "stub_versus_text",
    "window_orders_text",
    "window_rows",
]

STUDY_MS = 250  # study 004's stand-in for "a network checkpointer (Postgres or a hosted service)"
# Each table's columns, by their keys in the catalogue ("postgres.column.<key>").
COLUMNS = {
    "window": ("order", "killed_at", "at_kill", "after", "outcome"),
    "race": ("lock", "waited_at", "first", "second", "receipts", "outcome"),
    "crash": ("crashed_when", "postgres_showed", "commit_returned", "order_3", "rows_after"),
    "rerun": ("checkpointer", "writes_delay", "writes_rows", "ran_again"),
    "latency": ("checkpointer", "put_calls", "median", "p90", "max", "versus"),
}
# Where the client's last transaction stands at each crash point (postgres_panel.toml, whose
# panel shows the chosen one; crash_points_text lists them all)
CRASH_MEANINGS = Messages("postgres_panel.crash_point", CRASH_POINTS)
WINDOWS = "a list of WindowResult (what run_window or window_sweep returns)"
RACES = "a list of RaceResult (what run_race returns)"
CRASHES = "a list of CrashResult (what run_crash or crash_sweep returns)"
TRIALS = "a list of Trial (what checkpointer_matrix returns)"
# What runs.what_it_did says a worker of the race did, and the key of its words.
DID = {
    "retried after a serialization failure": "retried",
    "skipped: done=1 already": "skipped",
    "wrote a receipt and done=1": "wrote",
    "did nothing": "nothing",
}
THEN = ", then "  # between two things a worker did
SAW = {  # what the client's COMMIT returned, as runs.py and the client worker say it
    "committed": "committed",
    "no reply: it was paused when the server died": "no_reply",
}
ERROR = "error: "  # the client's COMMIT failed: Postgres's own message follows


def window_orders_text() -> str:
    """The write orders, each with what it does and its kill points in the order a run passes
    them."""
    return "\n".join(
        f"{order:17} {say(f'postgres.window_order.{order}')}\n{'':17} "
        + say("postgres.lines.kill_points", points=" → ".join(points))
        for order, points in WINDOW_ORDERS.items()
    )


def locks_text() -> str:
    """The three ways a second worker can meet the first's transaction, one line each."""
    return "\n".join(f"{lock:13} {say(f'postgres.lock.{lock}')}" for lock in LOCKS)


def crash_points_text() -> str:
    """Where the client's last transaction stands at each point the server is SIGKILLed."""
    return "\n".join(f"{point:17} {CRASH_MEANINGS[point]}" for point in CRASH_POINTS)


def stub_versus_text(median_ms: float) -> str:
    """How many times a median put() on this Postgres study 004's 250 ms stand-in is."""
    return say("postgres.lines.stub_versus", stub=STUDY_MS, times=STUDY_MS / median_ms)


def header(table: str) -> tuple[str, ...]:
    """The header of one of the COLUMNS' tables, in the reader's language."""
    return tuple(say(f"postgres.column.{key}") for key in COLUMNS[table])


def window_rows(results: Sequence[WindowResult]) -> list[tuple]:
    def pair(counts: dict) -> str:
        return f"{counts['done']}/{counts['receipts']}"

    return [
        (r.spec.order, r.spec.kill_at, pair(r.before), pair(r.after), outcome_cell(r))
        for r in check_items("results", results, WindowResult, WINDOWS)
    ]


def outcome_cell(result: WindowResult | RaceResult) -> str:
    """A run's outcome in the reader's language, or why it failed (as it is)."""
    return result.failure or outcome_name(result.outcome)


def did_words(did: str) -> str:
    """What a worker of the race did, in the reader's language (a reader's step's own words,
    or its error, as it said them)."""
    parts = did.split(THEN)
    if not all(part in DID for part in parts):
        return did
    return say("postgres.did.then").join(say(f"postgres.did.{DID[part]}") for part in parts)


def saw_words(saw: str) -> str:
    """What the client's COMMIT returned, in the reader's language (Postgres's error as is)."""
    if saw in SAW:
        return say(f"postgres.saw.{SAW[saw]}")
    if saw.startswith(ERROR):
        return say("postgres.saw.error", error=saw.removeprefix(ERROR))
    return saw


def race_rows(results: Sequence[RaceResult]) -> list[tuple]:
    return [
        (
            r.spec.lock,
            r.reports["second_waited_at"] or say("postgres.nowhere"),
            did_words(r.reports["first"]),
            did_words(r.reports["second"]),
            r.receipts,
            outcome_cell(r),
        )
        for r in check_items("results", results, RaceResult, RACES)
    ]


def crash_rows(results: Sequence[CrashResult]) -> list[tuple]:
    def seen(shown: dict) -> str:
        event = shown.get("wait_event")
        waiting = say("postgres.waiting_on", event=event) if event else ""
        return f"{shown.get('state')}: {shown.get('query')}{waiting}" if shown else "-"

    return [
        (
            r.spec.point,
            seen(r.seen_in_flight),
            saw_words(r.client_saw),
            say("postgres.survived" if r.in_flight_survived else "postgres.gone"),
            ", ".join(r.survived),
        )
        for r in check_items("results", results, CrashResult, CRASHES)
    ]


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
            t.failure or " ".join(t.rerun_nodes) or say("postgres.nothing"),
        )
        for t in check_items("trials", trials, Trial, TRIALS)
    ]


def format_rows(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A table for a terminal."""
    return format_grid(columns, rows)


def rows_html(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A table for a notebook; an outcome cell shows its word on its colour."""
    html = grid_html(columns, rows)
    for outcome in OUTCOMES:
        html = html.replace(f">{outcome_name(outcome)}</td>", f">{outcome_word(outcome)}</td>")
    return html


def latency_figure(latencies: Mapping[str, Sequence[float]]) -> Figure:
    """Every put() as a dot, one row per checkpointer, on a log scale, with the study's 250 ms
    as a line: where the real distribution sits against the stand-in."""
    from labkit.views.figures import new_figure

    check_instance("latencies", latencies, Mapping, "a dict of name: put() times in ms")
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


# --- in a notebook


def show(html: str) -> None:
    from IPython.display import HTML, display

    display(HTML(html))


def show_windows(results: Sequence[WindowResult]) -> None:
    show(rows_html(header("window"), window_rows(results)))


def show_races(results: Sequence[RaceResult]) -> None:
    show(rows_html(header("race"), race_rows(results)))


def crashes_html(results: Sequence[CrashResult]) -> str:
    """The crashes' table for a notebook; a row that survived the crash says so in colour."""
    survived = say("postgres.survived")
    return rows_html(header("crash"), crash_rows(results)).replace(
        f">{survived}<", f'><b style="color:{outcome_colour("consistent")}">{survived}</b><'
    )


def show_crashes(results: Sequence[CrashResult]) -> None:
    html = crashes_html(results)
    logs = {r.spec.point: r.recovery_log for r in results}
    point, log = next(iter(logs.items()))
    said = say("postgres.restarted_said", point=f"<code>{escape(point)}</code>")
    note = f"<p>{said}</p><pre>{escape(chr(10).join(log))}</pre>"
    show(html + note)


def guard_text(facts: Mapping[str, object]) -> str:
    """What keeps another user of the machine out of labkit's server, one line a fact, as
    `experiment.server_guard()` read them from the server."""
    network = facts["network"] or say("postgres.guard.no_network")
    lines = [
        say("postgres.guard.listens", network=network, mode=facts["socket_mode"]),
        say("postgres.guard.auth", methods=", ".join(facts["auth"])),
        say("postgres.guard.password", mode=facts["password_file_mode"]),
        say("postgres.guard.without", said=facts["without_password"]),
        say("postgres.guard.runs_as", user=facts["runs_as"], you=facts["you"]),
    ]
    return "\n".join(lines)


def show_matrix(trials: Sequence[Trial]) -> None:
    show(rows_html(matrix_columns(trials), matrix_rows(trials)))


def show_reruns(trials: Sequence[Trial]) -> None:
    show(rows_html(header("rerun"), rerun_rows(trials)))


def show_latencies(latencies: Mapping[str, Sequence[float]]) -> None:
    from IPython.display import Image, display

    from labkit.views.figures import figure_png

    show(rows_html(header("latency"), latency_rows(latencies)))
    display(Image(figure_png(latency_figure(latencies))))


def show_timeline(result: WindowResult) -> None:
    """The bench's commit-window timeline, drawn from the run's trace: one lane per session."""
    from IPython.display import Image, display

    from labkit.views.timeline import TimelineFigure

    check_instance("result", result, WindowResult, "a WindowResult (what run_window returns)")
    display(Image(TimelineFigure(result.events).png(None)))
