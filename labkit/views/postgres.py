"""Views of lesson 7: the commit window and the race on Postgres, the database's own crash, and
study 004's matrix on three checkpointers side by side with the real put() latencies.

Each table is built once as rows (`*_rows`) and shown as text (the CLI) or HTML (a notebook);
an outcome always carries its word. The timeline is the bench's, drawn from the workers' trace.
matplotlib and IPython load only where a figure is drawn or shown: the CLI's tables stay quick.
The tables' columns and their text and HTML are in postgres_tables, the checkpointers' matrix,
re-runs and latencies in postgres_checkpointers; every name imports from here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from labkit.bench.errors import check_choice, check_instance, check_items
from labkit.language import Messages, say
from labkit.language.failures import failure_text
from labkit.studies.postgres.spec import (
    CRASH_POINTS,
    LOCKS,
    NO_REPLY,
    WINDOW_ORDERS,
    CrashResult,
    RaceResult,
    WindowResult,
)
from labkit.views.commit_window_words import outcome_name
from labkit.views.palette import outcome_colour
from labkit.views.postgres_checkpointers import (
    latency_figure,
    latency_rows,
    matrix_columns,
    matrix_rows,
    rerun_rows,
    setup_name,
    show_latencies,
    show_matrix,
    show_reruns,
    stub_versus_text,
)
from labkit.views.postgres_tables import COLUMNS, format_rows, header, rows_html, show

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
    "window_outcomes",
    "window_rows",
]

# Where the client's last transaction stands at each crash point (postgres_panel.toml, whose
# panel shows the chosen one; crash_points_text lists them all)
CRASH_MEANINGS = Messages("postgres_panel.crash_point", CRASH_POINTS)
WINDOWS = "window_results"  # codes of cli.expected
RACES = "race_results"
CRASHES = "crash_results"
# What runs.what_it_did says a worker of the race did: codes, each a key of postgres.toml [did].
DID = ("retried", "skipped", "wrote", "nothing")
SAW = ("committed", NO_REPLY)  # what the client's COMMIT returned, as codes
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


def window_rows(results: Sequence[WindowResult]) -> list[tuple]:
    def pair(counts: dict) -> str:
        return f"{counts['done']}/{counts['receipts']}"

    return [
        (r.spec.order, r.spec.kill_at, pair(r.before), pair(r.after), outcome_cell(r))
        for r in check_items("results", results, WindowResult, WINDOWS)
    ]


def outcome_cell(result: WindowResult | RaceResult) -> str:
    """A run's outcome in the reader's language, or why it failed (as it is)."""
    return failure_text(result.failure) if result.failure else outcome_name(result.outcome)


def window_outcomes(results: Sequence[WindowResult]) -> str:
    """Each run of a sweep as a line, "effect_first killed at between: duplicate", in the
    reader's words: the runs the prose below the table names, one by one."""
    return "\n".join(
        say("postgres.lines.run_outcome", order=o, kill_at=k, outcome=outcome)
        for o, k, _, _, outcome in window_rows(results)
    )


def did_words(did: Sequence[str]) -> str:
    """What a worker of the race did (runs.what_it_did's codes, in order), in the reader's
    language."""
    codes = [check_choice("what a worker did", code, DID) for code in did]
    return say("postgres.did.then").join(say(f"postgres.did.{code}") for code in codes)


def saw_words(saw: str) -> str:
    """What the client's COMMIT returned, in the reader's language (Postgres's error as is)."""
    if saw in SAW:
        return say(f"postgres.saw.{saw}")
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


# --- in a notebook


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


def show_timeline(result: WindowResult) -> None:
    """The bench's commit-window timeline, drawn from the run's trace: one lane per session."""
    from IPython.display import Image, display

    from labkit.views.timeline import TimelineFigure

    check_instance("result", result, WindowResult, "window_result")
    display(Image(TimelineFigure(result.events).png(None)))
