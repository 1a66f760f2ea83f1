"""Views of outbox runs: the counts before and after recovery, the sweep, and a timeline with
a lane for the producer, the relay and the consumer, drawn from the trace.

Text for the terminal (`format_*`) and HTML for a notebook (`*_html`) show the same table; an
outcome is always a word with its meaning, never a colour alone. matplotlib is loaded only by
`outbox_timeline`, so the command line never pays for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from labkit.bench.errors import check_instance, check_items
from labkit.language import say
from labkit.language.failures import failure_text
from labkit.language.spacing import apart
from labkit.studies.outbox.experiment import (
    OUTBOX_KILL_POINTS,
    OUTBOX_OUTCOMES,
    OutboxResult,
    outbox_counts,
)
from labkit.views.commit_window_words import outcome_name
from labkit.views.figures import figure_png
from labkit.views.lanes_drawing import draw
from labkit.views.relay_timeline import relay_timeline
from labkit.views.tables import failure_note, grid_html, headers, outcome_word, snapshot_html
from labkit.views.text import counted, format_grid, format_snapshot, process_exits, process_name

__all__ = [
    "OUTBOX_COLUMNS",
    "format_outbox",
    "format_outbox_sweep",
    "node_runs_text",
    "outbox_html",
    "outbox_rows",
    "outbox_sweep_html",
    "outbox_timeline",
    "show_outbox",
    "show_outbox_sweep",
    "show_outbox_timeline",
]

OUTBOX_COLUMNS = (  # the table's columns; each header is outbox.toml's [columns]
    "consumer",
    "kill_at",
    "who_died",
    "orders",
    "sent",
    "deliveries",
    "effects",
    "inbox",
    "outcome",
)


def checked(result: object) -> OutboxResult:
    return check_instance("result", result, OutboxResult, "outbox_result")


def outbox_headers() -> list[str]:
    """OUTBOX_COLUMNS' headers in the reader's language."""
    return headers("outbox.columns", OUTBOX_COLUMNS)


def outbox_rows(results: Sequence[OutboxResult]) -> list[tuple]:
    """One row per run under OUTBOX_COLUMNS, for text and HTML alike."""
    rows = []
    for r in results:
        before, after = outbox_counts(r.before), outbox_counts(r.after)
        rows.append(
            (
                r.spec.consumer,
                r.spec.kill_at,
                process_name(r.killed) if r.killed else say("outbox.view.nobody"),
                after["orders"],
                f"{before['sent']} → {after['sent']}",
                r.deliveries,
                f"{before['effects']} → {after['effects']}",
                after["inbox"],
                outcome_name(r.outcome),
            )
        )
    return rows


def outcome_line(result: OutboxResult) -> str:
    why = say("outbox.view.why", failure=failure_text(result.failure)) if result.failure else ""
    meaning = OUTBOX_OUTCOMES[result.outcome]
    return (
        say("outbox.view.outcome", word=outcome_name(result.outcome).upper(), meaning=meaning) + why
    )


def head_text(r: OutboxResult) -> str:
    """Which process died where, and what had happened then ("no kill" if none did)."""
    dies, what = OUTBOX_KILL_POINTS[r.spec.kill_at]
    if dies == "nobody":
        return say("outbox.view.no_kill")
    return say("outbox.view.killed", process=process_name(dies), point=r.spec.kill_at, what=what)


def format_outbox(result: OutboxResult) -> str:
    """One run: what died where, its row of the table, how each process ended, the files."""
    r = checked(result)
    lines = [
        say("outbox.view.consumer", consumer=r.spec.consumer, head=head_text(r)),
        f"  {say('outbox.view.processes', exits=process_exits(r.summary()['exits']))}",
        f"  {say('outbox.view.outcome_line', outcome=outcome_line(r))}",
        f"  {say('outbox.view.run_folder', folder=r.run_dir)}",
        "",
        format_grid(outbox_headers(), outbox_rows([r])),
    ]
    after = format_snapshot(r.after, r.before, by="recovery")
    return "\n".join(lines) + f"\n\n{say('outbox.view.files_after')}\n\n" + after


def legend_lines() -> list[str]:
    return [f"  {outcome_name(word)}: {meaning}" for word, meaning in OUTBOX_OUTCOMES.items()]


def format_outbox_sweep(results: Sequence[OutboxResult]) -> str:
    """Every run of a sweep, one line each, and what each outcome word means."""
    results = check_items("results", results, OutboxResult, "outbox_results")
    table = format_grid(outbox_headers(), outbox_rows(results))
    return f"{table}\n\n{say('outbox.view.outcomes')}\n" + "\n".join(legend_lines())


def node_runs_text(ledger: Sequence[dict]) -> str:
    """The graph's node, a line per run (run_outbox_graph's "ledger"): which process ran it,
    and whether it wrote the order and its message or found them there already."""
    wrote = {True: "outbox.graph.order_and_message", False: "outbox.timeline.nothing_new"}
    return "\n".join(
        say(
            "outbox.graph.node_run",
            number=n,
            pid=line["pid"],
            wrote=say(wrote[line["wrote_order"]]),
        )
        for n, line in enumerate(ledger, 1)
    )


def outbox_html(result: OutboxResult) -> str:
    """A run: the kill, the outcome in words, the table row, the files before and after."""
    r = checked(result)
    dies, what = OUTBOX_KILL_POINTS[r.spec.kill_at]
    head = (
        say("outbox.view.no_kill")
        if dies == "nobody"
        else say("outbox.view.killed_html", process=process_name(dies), point=r.spec.kill_at)
    )
    said = say("outbox.view.consumer_html", consumer=r.spec.consumer, head=head, what=escape(what))
    exits = escape(process_exits(r.summary()["exits"]))
    folder = say("outbox.view.run_folder_html", folder=escape(str(r.run_dir)))
    after = f"<b>{say('outbox.view.after')}</b>"
    return (
        f"<div><p>{said}<br>{say('outbox.view.processes_html', exits=exits)}</p>"
        f"<p>{outcome_word(r.outcome)} {escape(OUTBOX_OUTCOMES[r.outcome])}"
        f"{failure_note(r.failure)}</p>"
        f"{grid_html(outbox_headers(), outbox_rows([r]))}"
        f"<p><b>{say('outbox.view.before')}</b></p>{snapshot_html(r.before)}"
        f"<p>{apart(after, say('outbox.view.after_note'))}</p>"
        f"{snapshot_html(r.after, r.before)}"
        f"<p style='color:#555'>{folder}</p></div>"
    )


def outbox_sweep_html(results: Sequence[OutboxResult]) -> str:
    """The sweep as a table; the outcome cell carries its word, and the words are explained."""
    results = check_items("results", results, OutboxResult, "outbox_results")
    words = [f"{outcome_word(r.outcome)}{failure_note(r.failure)}" for r in results]
    table = grid_html(outbox_headers(), outbox_rows(results), words)
    legend = "".join(f"<li>{outcome_word(w)} {escape(m)}</li>" for w, m in OUTBOX_OUTCOMES.items())
    return f"{table}<ul style='list-style:none;padding:0'>{legend}</ul>"


def show_outbox(result: OutboxResult) -> None:
    """Display a run in the notebook (`outbox_html`)."""
    from labkit.views import show_html

    show_html(outbox_html(result))


def show_outbox_sweep(results: Sequence[OutboxResult]) -> None:
    """Display a sweep in the notebook (`outbox_sweep_html`)."""
    from labkit.views import show_html

    show_html(outbox_sweep_html(results))


def show_outbox_timeline(result: OutboxResult) -> None:
    """Display the run's timeline as a picture, whatever matplotlib backend the kernel has."""
    from IPython.display import Image, display

    display(Image(figure_png(outbox_timeline(result))))


def outbox_timeline(result: OutboxResult) -> object:
    """A matplotlib Figure: a lane each for the producer, the relay and the consumer."""
    return draw(relay_timeline(checked(result).trace()))[0]


def kill_points_text() -> str:
    """Each kill point of an outbox run: the process that dies there, what has happened."""
    rows = [(point, dies_there(who), what) for point, (who, what) in OUTBOX_KILL_POINTS.items()]
    return format_grid(headers("outbox.view", ("point", "dies", "what")), rows)


def outcomes_text() -> str:
    """What each outcome word of an outbox run means, in the reader's language."""
    return "\n".join(legend_lines())


def outbox_outcome_counts(results: Sequence[OutboxResult]) -> str:
    """How many runs of a sweep ended each way, per consumer, in the reader's words."""
    results = check_items("results", results, OutboxResult, "outbox_results")
    consumers = dict.fromkeys(r.spec.consumer for r in results)
    return "\n".join(
        f"{consumer}: "
        + counted(outcome_name(r.outcome) for r in results if r.spec.consumer == consumer)
        for consumer in consumers
    )


def dies_there(process: str) -> str:
    """The process a kill point ends, in the reader's words ("nobody": none is killed)."""
    return say("outbox.view.nobody") if process == "nobody" else process_name(process)
