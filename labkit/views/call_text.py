"""Lesson 5's calls as plain text (`labkit call`): what the caller saw of each call, as
Jepsen's op types, beside what the service and the checkpoint hold; the notebook's HTML and
timeline use the same rows and words."""

from __future__ import annotations

from collections.abc import Sequence

from labkit.language import say
from labkit.language.failures import failure_text
from labkit.views.tables import headers
from labkit.views.text import format_grid

__all__ = [
    "call_columns",
    "call_outcome_name",
    "call_outcome_text",
    "call_rows",
    "call_status",
    "format_call",
    "format_call_sweep",
    "op_text",
]


def call_columns() -> list[str]:
    """Lesson 5's table's columns, in the reader's language."""
    columns = ("strategy", "fault", "jepsen", "tickets", "checkpoint", "outcome")
    return headers("text.call", columns)


def call_rows(results: Sequence) -> list[tuple]:
    """Lesson 5's table, one row per call (`CallResult`), under `call_columns()`: what the caller
    saw (each op's Jepsen type) beside what the service's file and the checkpoint hold."""
    return [
        (
            r.spec.strategy,
            r.spec.fault,
            " → ".join(map(op_text, r.ops)) or "-",
            len(r.tickets),
            call_status(r.status),
            call_outcome_text(r.outcome, r.failure),
        )
        for r in results
    ]


def call_status(status: str | None) -> str:
    """The caller's checkpoint's status in the reader's words ("-" when it holds none)."""
    return say(f"unknown_outcome.status.{status}") if status else "-"


def call_outcome_name(outcome: str) -> str:
    """A call's outcome code as the reader reads it: "orphan" (孤儿 in Chinese)."""
    return say(f"unknown_outcome.name.{outcome}")


def call_outcome_text(outcome: str, failure: dict | str | None) -> str:
    """A call's outcome in the reader's words; for a failed run why: "failed: ..."."""
    name = call_outcome_name(outcome)
    return (
        say("commit_window.failed_because", word=name, failure=failure_text(failure))
        if failure
        else name
    )


def op_text(op: dict) -> str:
    """One Jepsen op in a few words: "create info", "read ok: none", "create ok: #2" (创建：未知,
    查询成功：无 in Chinese); f and the type are codes, said from the catalogue."""
    f = say(f"text.op_f.{op['f']}")
    if op["type"] != "ok":
        return say("text.op", f=f, type=say(f"text.op_type.{op['type']}"))
    value = say("text.op_none") if op["value"] is None else f"#{op['value']}"
    return say("text.op_ok", f=f, value=value)


def format_call(result: object) -> str:
    """One call and its recovery: the row, the Jepsen history, the service's tickets."""
    from labkit.studies.unknown_outcome.outcome import JEPSEN_TYPES, OUTCOMES

    ops = [
        (op["process"], op["f"], op["key"], op["type"], op["value"], op["error"] or "")
        for op in result.ops
    ] or [(say("text.no_calls"), "", "", "", "", "")]
    tickets = result.tickets or [(say("tables.no_rows"), "", "", "")]
    service = say("text.service_tickets", service=result.service_dir.name, tenant=result.tenant)
    meaning = OUTCOMES[result.outcome]
    return "\n".join(
        [
            say(
                "text.outcome_meaning",
                outcome=call_outcome_name(result.outcome).upper(),
                meaning=meaning,
            ),
            *([say("text.why", failure=failure_text(result.failure))] if result.failure else []),
            "",
            format_grid(call_columns(), call_rows([result])),
            "",
            say("text.history"),
            format_grid(("process", "f", "key", "type", "value", "error"), ops),
            "  "
            + "; ".join(say("text.meaning", word=k, meaning=m) for k, m in JEPSEN_TYPES.items()),
            "",
            service,
            format_grid(("id", "tenant", "op_key", "payload"), tickets),
            "",
            say("text.run_folder", path=result.run_dir),
        ]
    )


def format_call_sweep(results: Sequence) -> str:
    """Every strategy under every fault, one row each, then what each outcome word means."""
    from labkit.studies.unknown_outcome.outcome import OUTCOMES

    seen = dict.fromkeys(r.outcome for r in results)
    words = "\n".join(
        "  " + say("text.meaning", word=call_outcome_name(w), meaning=OUTCOMES[w]) for w in seen
    )
    return format_grid(call_columns(), call_rows(results)) + "\n\n" + words
