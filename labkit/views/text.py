"""Plain-text views for a terminal or a projector: tables of rows, runs, sweeps, studies, and
how each process ended. Lesson 3's and 5's own tables are in interrupt_text and call_text."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from labkit.bench.snapshot import Snapshot
from labkit.language import say
from labkit.language.failures import failure_text
from labkit.studies.commit_window.orders import NO_KILL
from labkit.studies.commit_window.runs import RunResult
from labkit.studies.commit_window.tool_runs import ToolRun, tool_counts
from labkit.views.commit_window_words import OUTCOMES, outcome_name, outcome_text
from labkit.views.tables import headers, mark_note, row_marks
from labkit.views.terminal import format_grid

__all__ = [
    "counted",
    "format_grid",
    "format_records",
    "format_run",
    "format_snapshot",
    "format_sweep",
    "format_tool_run",
    "format_tool_settled",
    "process_exits",
    "process_name",
    "record_table",
]


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
            *([say("text.why", failure=failure_text(result.failure))] if result.failure else []),
            say("text.run_folder", path=s["run_dir"]),
        ),
    ]
    if s["timed_out"]:
        lines.insert(1, "  " + say("text.timed_out", roles=said_list(s["timed_out"])))
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
    return format_grid(headers("text.sweep", columns), rows)


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
    "graph",
)


def said_list(roles: Iterable[str]) -> str:
    """Processes by their roles' names, listed ("首个进程、恢复进程")."""
    return say("explorer.report.comma").join(process_name(role) for role in roles)


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


def counted(words: Iterable[str]) -> str:
    """How many times each word comes, the commonest first: "duplicate 3, consistent 9"."""
    pairs = Counter(words).most_common()
    return say("facts.list_separator").join(f"{word} {count}" for word, count in pairs)
