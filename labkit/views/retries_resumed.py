"""Views of the runs lesson 8 stops and resumes: a drain (which signal, what the resumed
process ran again) and the functional API's replay (which reference each process made).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from labkit.language import padded, say
from labkit.language.failures import failure_text
from labkit.views.retries_words import (
    DRAIN_COLUMNS,
    FUNCTIONAL_COLUMNS,
    checked,
    ended_word,
    header,
    show,
)
from labkit.views.tables import failure_note, grid_html, outcome_word
from labkit.views.text import format_grid, process_name


def drain_rows(results: Sequence[Mapping]) -> list[tuple]:
    """One row per stopped run under DRAIN_COLUMNS."""
    return [
        (
            r["spec"]["signal"]
            + ("" if r["spec"]["drain_safe"] else say("retries.drain.no_handler")),
            say("retries.exit", ended=ended_word(r["ended"]), code=r["first_exit"]),
            r["checkpoints_at_stop"],
            " ".join(r["ran"]["first"]),
            " ".join(r["ran"]["resume"]),
            " ".join(r["rerun_nodes"]) or "-",
        )
        for r in results
    ]


def format_drain(results: Sequence[Mapping]) -> str:
    results = [checked(r, ("spec", "ended", "ran"), "run_drain") for r in results]
    signals = dict.fromkeys(r["spec"]["signal"] for r in results)
    notes = [
        "  " + say("retries.meaning", word=s, meaning=say(f"retries.signal.{s}")) for s in signals
    ]
    failed = [
        say("retries.failed", failure=failure_text(r["failure"])) for r in results if r["failure"]
    ]
    return "\n".join([format_grid(header(DRAIN_COLUMNS), drain_rows(results)), *notes, *failed])


def drain_html(results: Sequence[Mapping]) -> str:
    results = [checked(r, ("spec", "ended", "ran"), "run_drain") for r in results]
    notes = "".join(failure_note(r["failure"]) for r in results)
    return grid_html(header(DRAIN_COLUMNS), drain_rows(results)) + notes


def format_functional(result: Mapping) -> str:
    result = checked(result, ("runs", "lines", "charged_ref"), "run_functional")
    where = say(
        "retries.functional.in_task"
        if result["spec"]["ref_in_task"]
        else "retries.functional.outside"
    )
    lines = [say("retries.functional.made", where=where)]
    lines += [
        f"  {padded(process_name(ln['role']), 6)} {ln['node']:<10} {ln['phase']:<5} {ln['ref']}"
        for ln in result["lines"]
    ]
    runs = result["runs"]
    ran = say(
        "retries.functional.ran",
        entrypoint=runs["entrypoint"],
        charge=runs["charge"],
        ship=runs["ship"],
        charged=result["charged_ref"],
        shipped=result["shipped_ref"],
    )
    differ = result["charged_ref"] != result["shipped_ref"]
    lines.append(ran + (say("retries.functional.differ") if differ else ""))
    if result["failure"]:
        lines.append(say("retries.no_outcome", failure=failure_text(result["failure"])))
    return "\n".join(lines)


def functional_html(result: Mapping) -> str:
    result = checked(result, ("runs", "lines", "charged_ref"), "run_functional")
    rows = [
        (process_name(ln["role"]), ln["node"], ln["phase"], ln["ref"]) for ln in result["lines"]
    ]
    differ = result["charged_ref"] != result["shipped_ref"]
    verdict = outcome_word(
        "duplicate" if differ else "consistent",
        say("retries.functional.refs_differ" if differ else "retries.functional.same_ref"),
    )
    charged = say(
        "retries.functional.charged",
        charged=f"<code>{escape(str(result['charged_ref']))}</code>",
        shipped=f"<code>{escape(str(result['shipped_ref']))}</code>",
        verdict=verdict,
    )
    return (
        grid_html(header(FUNCTIONAL_COLUMNS), rows)
        + f"<p>{charged}</p>"
        + failure_note(result["failure"])
    )


def show_drain(results: Sequence[Mapping]) -> None:
    show(drain_html(results))


def show_functional(result: Mapping) -> None:
    show(functional_html(result))
