"""HTML views of runs: outcome badges, SQLite tables before and after, the sweep matrix.

Each function returns an HTML string; `show_*` helpers wrap it for display in a notebook.
Rows that recovery added or changed are marked with a word and a colour, never colour alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from labkit.bench.failures import FAILED
from labkit.bench.snapshot import Snapshot, Table
from labkit.language import Messages, say
from labkit.language.failures import failure_text
from labkit.language.spacing import apart
from labkit.studies.commit_window.orders import NO_KILL, ORDERS, STUDY_000_REPORTED
from labkit.studies.commit_window.outcome import state_word
from labkit.studies.commit_window.runs import RunResult
from labkit.studies.commit_window.tool_runs import ToolRun
from labkit.views.commit_window_words import OUTCOMES, order_summary, outcome_name
from labkit.views.palette import outcome_colour
from labkit.views.terminal import sql_value

__all__ = [
    "headers",
    "failure_note",
    "mark_note",
    "outcome_badge",
    "outcome_word",
    "run_html",
    "snapshot_html",
    "sql_value",
    "study_table_html",
    "sweep_html",
    "tool_run_html",
]

# A tool step's outcomes that mean more than study 000's (tables.toml [tool_outcome])
TOOL_OUTCOMES = Messages("tables.tool_outcome", ("unknown", "lost"))
MARKS = {"added": "#FFF1C9", "changed": "#DCEEFB"}  # pale yellow, pale blue backgrounds
CELL = "padding:2px 8px;border:1px solid #ccc;text-align:left;font-family:monospace"


def outcome_word(outcome: str, word: str | None = None) -> str:
    """The outcome as a word on its colour, in the reader's language (DUPLICATE, 重复);
    `word` says it in other words, same colour."""
    word = word or outcome_name(outcome).upper()
    return (
        f'<span style="background:{outcome_colour(outcome)};color:white;padding:2px 8px;'
        f'border-radius:4px;font-weight:bold;white-space:nowrap">{escape(word)}</span>'
    )


def outcome_badge(outcome: str, failure: dict | str | None = None) -> str:
    """The outcome's word with its one-line meaning; for a failed run, why it failed."""
    why = (
        f"<br><b>{escape(say('tables.why'))}</b> <code>{escape(failure_text(failure))}</code>"
        if failure
        else ""
    )
    return f"{outcome_word(outcome)} {escape(OUTCOMES.get(outcome, ''))}{why}"


def failure_note(failure: dict | str | None) -> str:
    """A failed run's reason, small, under its outcome word in a table cell."""
    return f"<br><small>{escape(failure_text(failure))}</small>" if failure else ""


def row_marks(before: Table | None, after: Table) -> list[str]:
    """Per row of `after`: "added", "changed" or "" against `before`, matched by first column."""
    earlier = {row[0]: row for row in before.rows} if before else {}
    return [
        "added" if row[0] not in earlier else "changed" if earlier[row[0]] != row else ""
        for row in after.rows
    ]


def mark_note(mark: str, by: str) -> str:
    """What a marked row says: "← added by recovery". `mark` is "added" or "changed", `by` one
    of "recovery", "this_event", "reconciliation" (tables.toml's [by])."""
    return say("tables.row_mark", mark=say(f"tables.mark.{mark}"), by=say(f"tables.by.{by}"))


def table_html(title: str, table: Table, marks: Sequence[str] = (), by: str = "recovery") -> str:
    """One SQLite table as an HTML table; marked rows are tinted and say "added by {by}"
    (`by`: see `mark_note`)."""
    marked = any(marks)
    marks = list(marks) if marked else [""] * len(table.rows)

    def cells(values: Sequence[object], tag: str = "td") -> str:
        return "".join(f'<{tag} style="{CELL}">{escape(sql_value(v))}</{tag}>' for v in values)

    note = [""] if marked else []
    body = (
        "".join(
            f'<tr style="background:{MARKS.get(mark, "transparent")}">'
            + cells([*row, *([mark_note(mark, by) if mark else ""] if marked else [])])
            + "</tr>"
            for row, mark in zip(table.rows, marks, strict=True)
        )
        or f'<tr><td style="{CELL}" colspan="{len(table.columns)}">'
        f"<i>{escape(say('tables.no_rows'))}</i></td></tr>"
    )
    return (
        f'<table style="border-collapse:collapse;margin:4px 16px 8px 0">'
        f"<caption style='text-align:left;white-space:nowrap'><b>{escape(title)}</b></caption>"
        f"<thead><tr>{cells([*table.columns, *note], 'th')}</tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )


def snapshot_html(snapshot: Snapshot, earlier: Snapshot | None = None, by: str = "recovery") -> str:
    """Every table of every file; rows that differ from `earlier` are marked as `by`'s (see
    `mark_note`)."""
    parts = []
    for file, tables in snapshot.files.items():
        for name, table in tables.items():
            before = earlier.files.get(file, {}).get(name) if earlier else None
            marks = row_marks(before, table) if earlier else ()
            parts.append(table_html(f"{file} · {name}", table, marks, by))
    return f'<div style="display:flex;flex-wrap:wrap;align-items:flex-start">{"".join(parts)}</div>'


def before_after_html(result: RunResult) -> str:
    """Both snapshots: before recovery, then after it with recovery's rows marked."""
    before, after = result.before, result.after
    return (
        f"{stage_html('before_recovery', before)}{snapshot_html(before)}"
        f"{stage_html('after_recovery', after)}{snapshot_html(after, before)}"
    )


def stage_html(stage: str, snapshot: Snapshot) -> str:
    """A stage's heading with what the files held then: "Before recovery (done=0, receipts=1)"."""
    counts = say("tables.counts", done=snapshot.done, receipts=snapshot.receipts)
    heading = f"<b>{escape(say(f'tables.{stage}'))}</b>"
    return f"<p>{apart(heading, escape(counts))}</p>"


def run_folder_html(run_dir: str) -> str:
    """The run folder's line under a run."""
    path = f"<code>{escape(run_dir)}</code>"
    return f"<p style='color:#555'>{say('tables.run_folder', path=path)}</p>"


def run_html(result: RunResult) -> str:
    """A run: what was killed where, the outcome, and the files before and after recovery."""
    s = result.summary()
    kill = (
        escape(say("tables.no_kill"))
        if s["kill_at"] == NO_KILL
        else say(
            "tables.killed_at", point=f"<b>{escape(s['kill_at'])}</b>", mode=escape(s["kill_mode"])
        )
    )
    line = say(
        "tables.run_line",
        order=f"<b>{escape(s['order'])}</b>",
        kill=kill,
        first=s["first_exit"],
        recovery=s["replay_exit"],
    )
    return (
        f"<div><p>{line}</p>"
        f"<p>{outcome_badge(result.outcome, result.failure)}</p>"
        f"{before_after_html(result)}{run_folder_html(s['run_dir'])}</div>"
    )


def study_table_html(results: Sequence[RunResult]) -> str:
    """Study 000's table, rebuilt from real runs: done/receipts before and after recovery, and
    beside them what the study reported for the same case, and whether the two agree."""
    head = [
        say(f"tables.study_table.{column}")
        for column in (
            "order",
            "kill_at",
            "mode",
            "first_exit",
            "before",
            "after",
            "outcome",
            "reported",
            "here",
        )
    ]

    def reported(r: RunResult) -> tuple[str, str]:
        study = STUDY_000_REPORTED.get((r.spec.order, r.spec.kill_at))
        if study is None:
            return "-", "-"
        (done, receipts), (done_after, receipts_after) = study
        here = ((r.before.done, r.before.receipts), (r.after.done, r.after.receipts))
        same = say("tables.study_table.same" if here == study else "tables.study_table.differs")
        return f"{done} / {receipts} → {done_after} / {receipts_after}", same

    rows = "".join(
        "<tr>"
        + "".join(
            f'<td style="{CELL}">{escape(str(v))}</td>'
            for v in (
                r.spec.order,
                r.spec.kill_at,
                r.spec.kill_mode,
                r.first.exit_code,
                f"{r.before.done} / {r.before.receipts}",
                f"{r.after.done} / {r.after.receipts}",
            )
        )
        + f'<td style="{CELL}">{outcome_word(r.outcome)}{failure_note(r.failure)}</td>'
        + "".join(f'<td style="{CELL}">{escape(v)}</td>' for v in reported(r))
        + "</tr>"
        for r in results
    )
    header = "".join(f'<th style="{CELL}">{escape(h)}</th>' for h in head)
    return f'<table style="border-collapse:collapse"><tr>{header}</tr>{rows}</table>'


def sweep_html(results: Sequence[RunResult]) -> str:
    """A matrix: one row per order and kill mode, one cell per kill point, the outcome in it."""
    by_row: dict[tuple[str, str], list[RunResult]] = {}
    for r in results:
        by_row.setdefault((r.spec.order, r.spec.kill_mode), []).append(r)
    width = max(len(o.kill_points) for o in ORDERS.values())
    lines = []
    for (order, mode), runs in by_row.items():
        cells = "".join(
            f'<td style="{CELL};background:{outcome_colour(r.outcome)};color:white">'
            f"{escape(r.spec.kill_at)}<br><b>{escape(outcome_name(r.outcome))}</b><br>"
            f"{r.before.done}/{r.before.receipts} → {r.after.done}/{r.after.receipts}"
            f"{failure_note(r.failure)}</td>"
            for r in runs
        )
        lines.append(
            f'<tr><th style="{CELL}">{escape(order)}<br><small>{escape(mode)}</small>'
            f"</th>{cells}</tr>"
        )
    header = "".join(
        f'<th style="{CELL}">{escape(say("tables.sweep.kill_point", number=i + 1))}</th>'
        for i in range(width)
    )
    shown = (
        "consistent",
        "duplicate",
        "lost",
        *([FAILED] if any(r.failure for r in results) else []),
    )
    legend = " ".join(outcome_word(o) for o in shown)
    order = escape(say("tables.sweep.order"))
    return (
        f'<table style="border-collapse:collapse"><tr><th style="{CELL}">{order}</th>{header}'
        f"</tr>{''.join(lines)}</table><p>{say('tables.sweep.legend', legend=legend)}</p>"
    )


def grid_html(
    header: Sequence[str],
    rows: Sequence[Sequence[object]],
    last_cells: Sequence[str] | None = None,
) -> str:
    """A plain HTML table of text cells. With `last_cells`, each row's last cell is that HTML
    instead (an outcome's word on its colour, its failure), the same row's text elsewhere."""
    head = "".join(f'<th style="{CELL}">{escape(str(h))}</th>' for h in header)
    lines = []
    for n, row in enumerate(rows):
        texts = row if last_cells is None else row[:-1]
        cells = "".join(f'<td style="{CELL}">{escape(sql_value(v))}</td>' for v in texts)
        if last_cells is not None:
            cells += f'<td style="{CELL}">{last_cells[n]}</td>'
        lines.append(f"<tr>{cells}</tr>")
    return f'<table style="border-collapse:collapse"><tr>{head}</tr>{"".join(lines)}</table>'


def headers(prefix: str, keys: Sequence[str]) -> list[str]:
    """A table's column headers in the reader's language: each key's words under `prefix` in
    the catalogue ("retries.column" and "order" say retries.column.order)."""
    return [say(f"{prefix}.{key}") for key in keys]


def orders_html() -> str:
    """The four write orders, their files and their kill points in the order they are passed."""
    rows = [
        (o.name, ", ".join(o.files), " → ".join(o.kill_points), order_summary(o))
        for o in ORDERS.values()
    ]
    return grid_html(headers("tables.orders", ("order", "files", "kill_points", "does")), rows)


def refusal_text(key: str, refused: dict) -> str:
    """Why the receiver refused a delivery, from its code: the key holds another payload."""
    return say(
        f"tables.deliveries.{refused['code']}",
        key=key,  # quoted as the edition quotes ('op-1', “op-1”): the catalogue's
        held=refused["held"],
        sent=refused["sent"],
    )


def deliveries_html(answers: Sequence) -> str:
    """What an idempotent receiver answered to each delivery."""
    rows = [
        (
            a.key,
            a.payload,
            a.receipt_id if a.refused is None else "—",
            say("tables.deliveries.refused", reason=refusal_text(a.key, a.refused))
            if a.refused
            else say("tables.deliveries.accepted"),
        )
        for a in answers
    ]
    words = (say("tables.deliveries.receipt_id"), say("tables.deliveries.answer"))
    return grid_html(("op_key", "payload", *words), rows)


def tool_run_html(result: ToolRun) -> str:
    """A tool step's run: the outcome, the files before and after recovery, and after the
    reconciliation of an unknown outcome."""
    from labkit.views.text import process_exits  # text.py builds on this module

    s = result.summary()
    kill = (
        escape(say("tables.no_kill"))
        if s["kill_at"] == NO_KILL
        else say("tables.tool_killed_at", point=f"<b>{escape(s['kill_at'])}</b>")
    )
    line = say(
        "tables.tool_line",
        step=f"<b>{escape(result.step)}</b>",
        summary=escape(say(f"tables.tool_step.{result.step}")),
        kill=kill,
        exits=escape(process_exits(s["exits"])),
    )
    meaning = TOOL_OUTCOMES.get(result.outcome, OUTCOMES.get(result.outcome, ""))
    parts = [
        f"<p>{line}</p>",
        f"<p>{outcome_word(result.outcome)} {escape(meaning)}{failure_note(result.failure)}</p>",
        f"<p><b>{escape(say('tables.before_recovery'))}</b></p>{snapshot_html(result.before)}",
        f"<p><b>{escape(say('tables.after_recovery'))}</b></p>"
        f"{snapshot_html(result.after, result.before)}",
    ]
    if result.reconciled is not None:
        note = say("tables.reconciliation_note", word=outcome_word(state_word(result.reconciled)))
        reconciled = escape(say("tables.after_reconciliation"))
        parts.append(
            f"<p>{apart(f'<b>{reconciled}</b>', note)}</p>"
            f"{snapshot_html(result.reconciled, result.after, 'reconciliation')}"
        )
    parts.append(run_folder_html(s["run_dir"]))
    return "<div>" + "".join(parts) + "</div>"
