"""Plain-text views for a terminal or a projector: tables of rows, runs, sweeps, studies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from labkit.bench.snapshot import Snapshot
from labkit.studies.commit_window.orders import NO_KILL
from labkit.studies.commit_window.outcome import OUTCOMES, outcome_text
from labkit.studies.commit_window.runs import RunResult
from labkit.studies.commit_window.tool_runs import ToolRun, tool_counts
from labkit.views.tables import row_marks

__all__ = [
    "CALL_COLUMNS",
    "INTERRUPT_COLUMNS",
    "call_rows",
    "format_call",
    "format_call_sweep",
    "format_grid",
    "format_interrupt",
    "format_records",
    "op_text",
    "format_run",
    "format_snapshot",
    "format_sweep",
    "format_tool_run",
    "interrupt_rows",
    "process_exits",
    "record_table",
]


def format_grid(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Left-aligned columns, wide enough for their longest cell."""
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_snapshot(snapshot: Snapshot, earlier: Snapshot | None = None, by: str = "") -> str:
    """Every table of every file, as a reader would see them with the sqlite3 shell; with
    `earlier`, rows that differ from it say "← added by {by}" or "← changed by {by}"."""
    parts = []
    for file, tables in snapshot.files.items():
        for name, table in tables.items():
            header, rows = list(table.columns), [list(row) for row in table.rows]
            before = earlier.files.get(file, {}).get(name) if earlier else None
            marks = row_marks(before, table) if earlier else []
            if any(marks):
                header.append("")
                for row, mark in zip(rows, marks, strict=True):
                    row.append(f"← {mark} by {by}" if mark else "")
            rows = rows or [["(no rows)"] + [""] * (len(header) - 1)]
            parts.append(f"{file} · {name}\n{format_grid(header, rows)}")
    return "\n\n".join(parts)


def format_run(result: RunResult) -> str:
    """One run the way study 000 reports it, then what each file holds after recovery."""
    s = result.summary()
    lines = [
        f"{s['order']}, no kill"
        if s["kill_at"] == NO_KILL
        else f"{s['order']} killed at {s['kill_at']} ({s['kill_mode']})",
        f"  first worker exit: {s['first_exit']}",
        f"  before recovery: done={s['before']['done']} receipts={s['before']['receipts']}",
        f"  after recovery:  done={s['after']['done']} receipts={s['after']['receipts']}"
        f"  (recovery exit {s['replay_exit']})",
        f"  outcome: {result.outcome.upper()}: {OUTCOMES[result.outcome]}",
        *([f"  why: {result.failure}"] if result.failure else []),
        f"  run folder: {s['run_dir']}",
    ]
    if s["timed_out"]:
        lines.insert(1, f"  TIMED OUT and killed by the launcher: {', '.join(s['timed_out'])}")
    after = format_snapshot(result.after, result.before, by="recovery")
    return "\n".join(lines) + "\n\nThe files after recovery:\n\n" + after


def format_tool_run(result: ToolRun) -> str:
    """A tool step's run: what each stage left (the figures, then the files at the end)."""
    s = result.summary()
    kill = "no kill" if s["kill_at"] == NO_KILL else f"killed at {s['kill_at']}"
    lines = [f"{s['step']} {kill}; exits {s['exits']}"]
    for stage, snapshot in (("before recovery", result.before), ("after recovery", result.after)):
        lines.append(f"  {stage}: {tool_counts(snapshot)}")
    if result.reconciled is not None:
        lines.append(f"  after reconciliation: {tool_counts(result.reconciled)}")
    lines += [
        f"  outcome: {outcome_text(result.outcome, result.failure).upper()}",
        f"  run folder: {s['run_dir']}",
    ]
    last = result.reconciled or result.after
    return "\n".join(lines) + "\n\nThe files at the end:\n\n" + format_snapshot(last)


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
    return format_grid(("order", "kill at", "mode", "done/receipts", "outcome"), rows)


def record_table(records: Sequence[Mapping[str, object]]) -> tuple[list[str], list[list]]:
    """Dicts with the same keys as a table: the keys in words as the header, a row per dict."""
    keys = list(records[0]) if records else []
    return [key.replace("_", " ") for key in keys], [[r[key] for key in keys] for r in records]


def format_records(records: Sequence[Mapping[str, object]]) -> str:
    """Dicts with the same keys, one row each (a pitfall's timings, for one)."""
    return format_grid(*record_table(records))


PROCESS_NAMES = {"study": "one process", "first": "first", "resume": "resume", "recover": "recover"}


def process_exits(exits: Mapping[str, int]) -> str:
    """How each process ended, in words: "first: killed by SIGKILL → resume: exited 0"."""

    def ended(code: int) -> str:
        if code == -9:
            return "killed by SIGKILL"
        return f"killed by signal {-code}" if code < 0 else f"exited {code}"

    return " → ".join(
        f"{PROCESS_NAMES.get(role, role)}: {ended(code)}" for role, code in exits.items()
    )


INTERRUPT_COLUMNS = (
    "key",
    "layout",
    "resumed in",
    "kill at",
    "node calls",
    "tickets before resume",
    "tickets after",
    "receipts",
    "processes",
)


def interrupt_rows(results: Sequence[Mapping]) -> list[tuple]:
    """Study 001's table, one row per run, under INTERRUPT_COLUMNS (text and HTML alike)."""
    return [
        (
            r["key"],
            r["layout"],
            "new process" if r["cross_process"] else "same process",
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
    tickets = result["tickets"] or [("(no rows)", "", "", "")]
    return "\n".join(
        [
            f"outcome: {result['outcome'].upper()}",
            *([f"why: {result['failure']}"] if result.get("failure") else []),
            "",
            format_grid(INTERRUPT_COLUMNS, interrupt_rows([result])),
            "",
            "tickets.db · ticket",
            format_grid(("id", "tenant", "op_key", "payload"), tickets),
            "",
            f"run folder: {result['run_dir']}",
        ]
    )


CALL_COLUMNS = ("strategy", "fault", "jepsen (caller saw)", "tickets", "checkpoint", "outcome")


def call_rows(results: Sequence) -> list[tuple]:
    """Lesson 5's table, one row per call (`CallResult`), under CALL_COLUMNS: what the caller
    saw (each op's Jepsen type) beside what the service's file and the checkpoint hold."""
    from labkit.studies.unknown_outcome.outcome import FAILED

    return [
        (
            r.spec.strategy,
            r.spec.fault,
            " → ".join(map(op_text, r.ops)) or "-",
            len(r.tickets),
            r.status or "-",
            f"{FAILED}: {r.failure}" if r.failure else r.outcome,
        )
        for r in results
    ]


def op_text(op: dict) -> str:
    """One Jepsen op in a few words: "create info", "read ok: none", "create ok: #2"."""
    if op["type"] != "ok":
        return f"{op['f']} {op['type']}"
    return f"{op['f']} ok: " + ("none" if op["value"] is None else f"#{op['value']}")


def format_call(result: object) -> str:
    """One call and its recovery: the row, the Jepsen history, the service's tickets."""
    from labkit.studies.unknown_outcome.outcome import JEPSEN_TYPES, OUTCOMES

    ops = [
        (op["process"], op["f"], op["key"], op["type"], op["value"], op["error"] or "")
        for op in result.ops
    ] or [("(no calls)", "", "", "", "", "")]
    tickets = result.tickets or [("(no rows)", "", "", "")]
    return "\n".join(
        [
            f"outcome: {result.outcome.upper()}: {OUTCOMES[result.outcome]}",
            *([f"why: {result.failure}"] if result.failure else []),
            "",
            format_grid(CALL_COLUMNS, call_rows([result])),
            "",
            "history.jsonl · every call as Jepsen records it",
            format_grid(("process", "f", "key", "type", "value", "error"), ops),
            "  " + "; ".join(f"{kind}: {text}" for kind, text in JEPSEN_TYPES.items()),
            "",
            f"service {result.service_dir.name}/tickets.db · ticket (tenant {result.tenant})",
            format_grid(("id", "tenant", "op_key", "payload"), tickets),
            "",
            f"run folder: {result.run_dir}",
        ]
    )


def format_call_sweep(results: Sequence) -> str:
    """Every strategy under every fault, one row each, then what each outcome word means."""
    from labkit.studies.unknown_outcome.outcome import OUTCOMES

    seen = dict.fromkeys(r.outcome for r in results)
    words = "\n".join(f"  {word}: {OUTCOMES[word]}" for word in seen)
    return format_grid(CALL_COLUMNS, call_rows(results)) + "\n\n" + words
