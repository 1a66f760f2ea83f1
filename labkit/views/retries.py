"""Views of lesson 8's runs: per-order charges under a retry policy, LangGraph's own retry table,
the error handler of #9002, a stopped and resumed run, the first-checkpoint distribution
(a figure, and a panel with a progress bar), the functional API's replay.

Text for the terminal (`format_*`) and HTML for a notebook (`*_html`) show the same rows; an
outcome is always a word with its meaning, never a colour alone. matplotlib and ipywidgets are
loaded only by the figure and the panel, so the command line never pays for them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from labkit.language import joined, say
from labkit.language.failures import failure_text
from labkit.views.first_checkpoint import (
    first_checkpoint_figure,
    first_checkpoint_rows,
    format_first_checkpoint,
    panel_class,
    show_first_checkpoint,
)
from labkit.views.retries_resumed import (
    drain_html,
    drain_rows,
    format_drain,
    format_functional,
    functional_html,
    show_drain,
    show_functional,
)
from labkit.views.retries_words import (
    ATTEMPT_COLUMNS,
    ORDER_COLOURS,
    RETRY_COLUMNS,
    checked,
    header,
    order_word,
    short,
    show,
)
from labkit.views.tables import failure_note, grid_html, outcome_word
from labkit.views.text import format_grid

__all__ = [  # and FirstCheckpointPanel, made on first use (`panel_class`)
    "attempt_rows",
    "drain_html",
    "drain_rows",
    "first_checkpoint_figure",
    "first_checkpoint_rows",
    "format_drain",
    "format_first_checkpoint",
    "format_functional",
    "format_handler",
    "format_retry",
    "format_retry_table",
    "functional_html",
    "handler_runs_text",
    "lost_runs_text",
    "panel_class",
    "retry_rows",
    "show_drain",
    "show_first_checkpoint",
    "show_functional",
    "show_handler",
    "show_retry",
    "show_retry_table",
    "stop_text",
]


def retry_rows(result: Mapping) -> list[tuple]:
    """One row per order under RETRY_COLUMNS."""
    return [
        (
            o["order"],
            o["attempts"],
            ", ".join(short(k) for k in o["keys"]),
            o["new_charges"],
            say("retries.receipt", receipt=o["receipt"]) if o["error"] is None else o["error"],
            order_word(o["outcome"]),
        )
        for o in result["orders"]
    ]


def attempt_rows(result: Mapping) -> list[tuple]:
    """The ledger, one line per attempt: what each run of the node did."""
    return [
        (
            a["order"],
            a["attempt"],
            a["phase"],
            short(a["key"]),
            "-" if a["charge"] is None else f"#{a['charge']}",
            "-" if a["new"] is None else say("retries.new" if a["new"] else "retries.original"),
        )
        for a in result["attempts"]
    ]


def retry_heading(result: Mapping) -> str:
    spec = result["spec"]
    return say(
        "retries.heading",
        policy=spec["policy"],
        policy_meaning=say(f"retries.policy.{spec['policy']}"),
        key=spec["key"],
        key_meaning=say(f"retries.key.{spec['key']}"),
        node=say("retries.async_node" if spec["asynchronous"] else "retries.sync_node"),
        failure=say(f"retries.failure.{spec['failure']}"),
    )


def meanings(result: Mapping) -> list[tuple[str, str]]:
    """Each outcome word the orders got, with what it means."""
    words = sorted({o["outcome"] for o in result["orders"]})
    return [(order_word(w), say(f"retries.order_meaning.{w}")) for w in words]


def format_retry(result: Mapping) -> str:
    result = checked(result, ("spec", "orders", "charges"), "run_retry")
    lines = [retry_heading(result), "", format_grid(header(RETRY_COLUMNS), retry_rows(result)), ""]
    lines.append(say("retries.charges", count=len(result["charges"])))
    lines += ["  " + say("retries.meaning", word=w, meaning=m) for w, m in meanings(result)]
    if result["failure"]:
        lines.append(say("retries.no_outcome", failure=failure_text(result["failure"])))
    return "\n".join(lines)


def retry_html(result: Mapping) -> str:
    result = checked(result, ("spec", "orders", "charges"), "run_retry")
    rows = retry_rows(result)
    words = [
        outcome_word(ORDER_COLOURS[order["outcome"]], row[-1].upper())
        for order, row in zip(result["orders"], rows, strict=True)
    ]
    listed = "".join(
        f"<li>{say('retries.meaning', word=f'<b>{escape(w)}</b>', meaning=escape(m))}</li>"
        for w, m in meanings(result)
    )
    charges = say("retries.charges", count=f"<b>{len(result['charges'])}</b>")
    return (
        f"<p>{escape(retry_heading(result))}</p>"
        f"{grid_html(header(RETRY_COLUMNS), rows, words)}<p>{charges}</p>"
        f"<ul>{listed}</ul><details><summary>{escape(say('retries.ledger'))}</summary>"
        f"{grid_html(header(ATTEMPT_COLUMNS), attempt_rows(result))}</details>"
        f"{failure_note(result['failure'])}"
    )


def format_retry_table(rows: Sequence[Mapping]) -> str:
    """LangGraph's default retry_on, as the installed library answered it."""
    retried = {True: say("retries.retried"), False: say("retries.not_retried")}
    grid = [(r["error"], r["status"] or "-", retried[bool(r["retried"])]) for r in rows]
    return format_grid(header(("error", "status", "retried_by")), grid)


def retry_table_html(rows: Sequence[Mapping]) -> str:
    retried = {True: say("retries.retried_html"), False: say("retries.not_retried")}
    grid = [(r["error"], r["status"] or "-", retried[bool(r["retried"])]) for r in rows]
    return grid_html(header(("error", "status", "retries_it")), grid)


def handler_lines(result: Mapping) -> list[str]:
    runs, spec = result["handler_runs"], result["spec"]
    way = "add_node(error_handler=...)" if spec["way"] == "add_node" else "set_node_defaults(...)"
    keys = ", ".join(short(r["key"]) for r in result["refunds"]) or say("retries.handler.none")
    refund_key = say("retries.handler.from_order" if spec["keyed"] else "retries.handler.new_uuid")
    seen = joined(say("retries.handler.then"), result["handler_saw"])
    return [
        say("retries.handler.set_with", way=way, refund_key=refund_key),
        say("retries.handler.ran", first=runs["first"], resume=runs["resume"]),
        say("retries.handler.refunds", count=len(result["refunds"]), keys=keys),
        say("retries.handler.saw", seen=seen),
        say("retries.handler.state", log=", ".join(result["resume"].get("log", []))),
    ]


def handler_runs_text(way: str, first: int, resume: int, refunds: int) -> str:
    """How often an error handler set one `way` ran, in the first process and the resumed
    one, and the refunds the payment service holds afterwards."""
    return say("retries.lines.handler_runs", way=way, first=first, resume=resume, refunds=refunds)


def lost_runs_text(mode: str, lost: int, counted: int) -> str:
    """A durability mode's accepted runs that left no trace, of the `counted` that ran as
    planned, and the share."""
    percent = 100 * lost / counted
    return say("retries.lines.lost_runs", mode=mode, lost=lost, counted=counted, percent=percent)


def stop_text(mode: str, result: Mapping) -> str:
    """How many trials a mode ran and the 95 % interval of its lost share (in percent): where
    a margin stopped it early (`sequential`), and within what."""
    low, high = (100 * share for share in result["interval"])
    fields = {"mode": mode, "trials": result["trials"], "low": low, "high": high}
    if result["trials"] < result["most"]:
        margin = 100 * result["margin"]
        return say("retries.lines.stopped_at", most=result["most"], margin=margin, **fields)
    return say("retries.lines.ran_all", **fields)


def format_handler(result: Mapping) -> str:
    result = checked(result, ("handler_runs", "refunds", "resume"), "run_handler")
    failed = (
        [say("retries.no_outcome", failure=failure_text(result["failure"]))]
        if result["failure"]
        else []
    )
    return "\n".join(handler_lines(result) + failed)


def handler_html(result: Mapping) -> str:
    result = checked(result, ("handler_runs", "refunds", "resume"), "run_handler")
    items = "".join(f"<li>{escape(line)}</li>" for line in handler_lines(result))
    return f"<ul>{items}</ul>{failure_note(result['failure'])}"


def show_retry(result: Mapping) -> None:
    show(retry_html(result))


def show_retry_table(rows: Sequence[Mapping]) -> None:
    show(retry_table_html(rows))


def show_handler(result: Mapping) -> None:
    show(handler_html(result))


def __getattr__(name: str) -> object:
    """`FirstCheckpointPanel` is made when first asked for (see `panel_class`)."""
    if name == "FirstCheckpointPanel":
        return panel_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
