"""Plain-text views for a terminal or a projector: tables of rows, runs, sweeps, studies."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from labkit.bench.snapshot import Snapshot
from labkit.language import display_width, padded, say
from labkit.studies.commit_window.orders import NO_KILL
from labkit.studies.commit_window.outcome import OUTCOMES, outcome_name, outcome_text
from labkit.studies.commit_window.runs import RunResult
from labkit.studies.commit_window.tool_runs import ToolRun, tool_counts
from labkit.views.tables import mark_note, row_marks

__all__ = [
    "counted",
    "call_columns",
    "call_outcome_name",
    "call_status",
    "call_rows",
    "format_call",
    "format_call_sweep",
    "format_grid",
    "format_interrupt",
    "format_records",
    "format_run",
    "format_snapshot",
    "format_sweep",
    "format_tool_run",
    "format_tool_settled",
    "interrupt_columns",
    "interrupt_rows",
    "op_text",
    "process_exits",
    "process_name",
    "record_table",
]


def format_grid(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Left-aligned columns, wide enough for their longest cell (by display width, so that
    Chinese cells line up too)."""
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(display_width(row[i]) for row in cells) for i in range(len(header))]
    lines = [
        "  ".join(padded(c, w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_snapshot(
    snapshot: Snapshot, earlier: Snapshot | None = None, by: str = "recovery"
) -> str:
    """Every table of every file, as a reader would see them with the sqlite3 shell; with
    `earlier`, rows that differ from it say "← added by recovery" or "← changed by recovery"
    (`by`: who, see `tables.mark_note`)."""
    parts = []
    for file, tables in snapshot.files.items():
        for name, table in tables.items():
            header, rows = list(table.columns), [list(row) for row in table.rows]
            before = earlier.files.get(file, {}).get(name) if earlier else None
            marks = row_marks(before, table) if earlier else []
            if any(marks):
                header.append("")
                for row, mark in zip(rows, marks, strict=True):
                    row.append(mark_note(mark, by) if mark else "")
            rows = rows or [[say("tables.no_rows")] + [""] * (len(header) - 1)]
            parts.append(f"{file} · {name}\n{format_grid(header, rows)}")
    return "\n\n".join(parts)


def format_run(result: RunResult) -> str:
    """One run the way study 000 reports it, then what each file holds after recovery."""
    s = result.summary()
    before, after = (
        f"done={s[k]['done']} receipts={s[k]['receipts']}" for k in ("before", "after")
    )
    name, meaning = outcome_name(result.outcome).upper(), OUTCOMES[result.outcome]
    lines = [
        say("text.no_kill_run", order=s["order"])
        if s["kill_at"] == NO_KILL
        else say("text.killed_run", order=s["order"], point=s["kill_at"], mode=s["kill_mode"]),
        *indented(
            say("text.first_exit", code=s["first_exit"]),
            say("text.stage.before", state=before),
            say("text.stage.after_exit", state=after, code=s["replay_exit"]),
            say("text.outcome_meaning", outcome=name, meaning=meaning),
            *([say("text.why", failure=result.failure)] if result.failure else []),
            say("text.run_folder", path=s["run_dir"]),
        ),
    ]
    if s["timed_out"]:
        lines.insert(1, "  " + say("text.timed_out", roles=", ".join(s["timed_out"])))
    files = format_snapshot(result.after, result.before, by="recovery")
    return "\n".join([*lines, "", say("text.files_after"), "", files])


def indented(*lines: str) -> list[str]:
    """A run's report's details, two spaces in under its first line."""
    return ["  " + line for line in lines]


def format_tool_run(result: ToolRun) -> str:
    """A tool step's run: what each stage left (the figures, then the files at the end)."""
    s = result.summary()
    first = (
        say("text.tool_no_kill", step=s["step"], exits=process_exits(s["exits"]))
        if s["kill_at"] == NO_KILL
        else say(
            "text.tool_killed", step=s["step"], point=s["kill_at"], exits=process_exits(s["exits"])
        )
    )
    stages = [("before", result.before), ("after", result.after)]
    if result.reconciled is not None:
        stages.append(("reconciled", result.reconciled))
    lines = [
        first,
        *indented(
            *(say(f"text.stage.{stage}", state=counts_text(snap)) for stage, snap in stages),
            say("text.outcome", outcome=outcome_text(result.outcome, result.failure).upper()),
            say("text.run_folder", path=s["run_dir"]),
        ),
    ]
    last = format_snapshot(result.reconciled or result.after)
    return "\n".join([*lines, "", say("text.files_at_end"), "", last])


def counts_text(snapshot: Snapshot) -> str:
    """A tool run's figures as the files name them, not as a dict:
    "done=0 receipts=[demo-report-17] pending=[pending]"."""
    return " ".join(
        f"{name}=[{', '.join(map(str, value))}]" if isinstance(value, list) else f"{name}={value}"
        for name, value in tool_counts(snapshot).items()
    )


def format_tool_settled(result: ToolRun) -> str:
    """A tool step's kill point in one line: the word recovery said, then done and the receipts
    once settled, after the reconciliation when the outcome was unknown (lesson 2's list)."""
    settled = result.reconciled or result.after
    by = "reconciliation" if result.reconciled else "recovery"
    return say(
        "text.tool_settled",
        point=result.kill_at,
        outcome=outcome_name(result.outcome),
        done=settled.done,
        receipts=settled.receipts,
        by=say(f"text.settled_by.{by}"),
    )


def format_sweep(results: Sequence[RunResult]) -> str:
    """One line per run: order, kill point, mode, done/receipts before → after, outcome."""
    rows = [
        (
            r.spec.order,
            r.spec.kill_at,
            r.spec.kill_mode,
            f"{r.before.done}/{r.before.receipts} → {r.after.done}/{r.after.receipts}",
            outcome_text(r.outcome, r.failure),
        )
        for r in results
    ]
    columns = ("order", "kill_at", "mode", "counts", "outcome")
    return format_grid([say(f"text.sweep.{column}") for column in columns], rows)


def record_table(records: Sequence[Mapping[str, object]]) -> tuple[list[str], list[list]]:
    """Dicts with the same keys as a table: the keys in words as the header, a row per dict."""
    keys = list(records[0]) if records else []
    return [key.replace("_", " ") for key in keys], [[r[key] for key in keys] for r in records]


def format_records(records: Sequence[Mapping[str, object]]) -> str:
    """Dicts with the same keys, one row each (a pitfall's timings, for one)."""
    return format_grid(*record_table(records))


# roles with a name (text.toml [process]); the outbox's consumers are named after their relay
NAMED_PROCESSES = (
    "study",
    "first",
    "resume",
    "recover",
    "recovery",
    "reconcile",
    "producer",
    "relay",
    "consumer",
)


def process_name(role: str) -> str:
    """A process's role in the reader's words: "first", "relay-consumer-1" (中继的消费者 1);
    a role without a name (a lease's "w1") is said as it is."""
    relay, _, number = role.rpartition("-consumer-")
    if relay and number.isdigit():
        return say("text.process.consumer_of", relay=process_name(relay), number=number)
    return say(f"text.process.{role}") if role in NAMED_PROCESSES else role


def process_exits(exits: Mapping[str, int]) -> str:
    """How each process ended, in words: "first: killed by SIGKILL → resume: exited 0"."""
    return " → ".join(
        say("text.process_exit", name=process_name(role), ended=how_it_ended(code))
        for role, code in exits.items()
    )


def how_it_ended(code: int) -> str:
    """A process's exit status in words: "killed by SIGKILL", "exited 0"."""
    if code == -9:
        return say("text.ended.sigkill")
    return (
        say("text.ended.signal", number=-code) if code < 0 else say("text.ended.exited", code=code)
    )


def interrupt_columns() -> list[str]:
    """Study 001's table's columns, in the reader's language."""
    return [
        say(f"text.interrupt.{column}")
        for column in (
            "key",
            "layout",
            "resumed_in",
            "kill_at",
            "node_calls",
            "tickets_before",
            "tickets_after",
            "receipts",
            "processes",
        )
    ]


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


def format_interrupt(result: Mapping) -> str:
    """One run of study 001: its row of the study's table, the tickets, the run folder."""
    tickets = result["tickets"] or [(say("tables.no_rows"), "", "", "")]
    return "\n".join(
        [
            say("text.outcome", outcome=result["outcome"].upper()),
            *([say("text.why", failure=result["failure"])] if result.get("failure") else []),
            "",
            format_grid(interrupt_columns(), interrupt_rows([result])),
            "",
            "tickets.db · ticket",
            format_grid(("id", "tenant", "op_key", "payload"), tickets),
            "",
            say("text.run_folder", path=result["run_dir"]),
        ]
    )


def call_columns() -> list[str]:
    """Lesson 5's table's columns, in the reader's language."""
    columns = ("strategy", "fault", "jepsen", "tickets", "checkpoint", "outcome")
    return [say(f"text.call.{column}") for column in columns]


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


def call_outcome_text(outcome: str, failure: str | None) -> str:
    """A call's outcome in the reader's words; for a failed run why: "failed: ..."."""
    name = call_outcome_name(outcome)
    return say("commit_window.failed_because", word=name, failure=failure) if failure else name


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
            *([say("text.why", failure=result.failure)] if result.failure else []),
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


def counted(words: Iterable[str]) -> str:
    """How many times each word comes, the commonest first: "duplicate 3, consistent 9"."""
    pairs = Counter(words).most_common()
    return say("facts.list_separator").join(f"{word} {count}" for word, count in pairs)
