"""Study 001's table as plain text (lesson 3, `labkit interrupt`): one row per run of an
interrupted node, with what each process did; the notebook's HTML uses the same rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from labkit.bench.failures import FAILED
from labkit.language import say
from labkit.language.failures import failure_text
from labkit.views.commit_window_words import outcome_name
from labkit.views.tables import headers
from labkit.views.text import format_grid, process_exits

__all__ = ["format_interrupt", "interrupt_columns", "interrupt_rows", "outcome_words"]


def interrupt_columns() -> list[str]:
    """Study 001's table's columns, in the reader's language."""
    columns = ("key", "layout", "resumed_in", "kill_at", "node_calls")
    return headers(
        "text.interrupt", (*columns, "tickets_before", "tickets_after", "receipts", "processes")
    )


def interrupt_rows(results: Sequence[Mapping]) -> list[tuple]:
    """Study 001's table, one row per run, under `interrupt_columns()` (text and HTML alike)."""
    return [
        (
            r["key"],
            r["layout"],
            say(
                "text.interrupt.new_process"
                if r["cross_process"]
                else "text.interrupt.same_process"
            ),
            r["kill_at"],
            r["node_calls"],
            r["before_resume"],
            r["after_resume"],
            ", ".join(map(str, r["receipts"])),
            process_exits(r["exits"]),
        )
        for r in results
    ]


def outcome_words(result: Mapping) -> str:
    """A run's outcome as the reader reads it: one ticket, or how many (the study's rule: one
    request, one ticket), or that it failed; the result holds a code ("duplicate")."""
    if result.get("failure"):
        return outcome_name(FAILED).upper()
    if result["after_resume"] == 1:
        return say("interrupt_resume.one_ticket")
    return say("interrupt_resume.tickets", count=result["after_resume"])


def format_interrupt(result: Mapping) -> str:
    """One run of study 001: its row of the study's table, the tickets, the run folder."""
    tickets = result["tickets"] or [(say("tables.no_rows"), "", "", "")]
    return "\n".join(
        [
            say("text.outcome", outcome=outcome_words(result)),
            *(
                [say("text.why", failure=failure_text(result["failure"]))]
                if result.get("failure")
                else []
            ),
            "",
            format_grid(interrupt_columns(), interrupt_rows([result])),
            "",
            "tickets.db · ticket",
            format_grid(("id", "tenant", "op_key", "payload"), tickets),
            "",
            say("text.run_folder", path=result["run_dir"]),
        ]
    )
