"""Plain-text views for a terminal or a projector: tables of rows, runs and sweeps."""

from __future__ import annotations

from collections.abc import Sequence

from labkit.outcome import OUTCOMES
from labkit.runs import RunResult
from labkit.snapshot import Snapshot

__all__ = ["format_grid", "format_run", "format_snapshot", "format_sweep"]


def format_grid(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Left-aligned columns, wide enough for their longest cell."""
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_snapshot(snapshot: Snapshot) -> str:
    """Every table of every file, as a reader would see them with the sqlite3 shell."""
    parts = []
    for file, tables in snapshot.files.items():
        for name, table in tables.items():
            rows = table.rows or [["(no rows)"] + [""] * (len(table.columns) - 1)]
            parts.append(f"{file} · {name}\n{format_grid(table.columns, rows)}")
    return "\n\n".join(parts)


def format_run(result: RunResult) -> str:
    """One run the way study 000 reports it, then what each file holds after recovery."""
    s = result.summary()
    lines = [
        f"{s['order']} killed at {s['kill_at']} ({s['kill_mode']})",
        f"  first worker exit: {s['first_exit']}",
        f"  before recovery: done={s['before']['done']} receipts={s['before']['receipts']}",
        f"  after recovery:  done={s['after']['done']} receipts={s['after']['receipts']}"
        f"  (recovery exit {s['replay_exit']})",
        f"  outcome: {result.outcome.upper()}: {OUTCOMES[result.outcome]}",
        f"  run folder: {s['run_dir']}",
    ]
    if s["timed_out"]:
        lines.insert(1, f"  TIMED OUT and killed by the launcher: {', '.join(s['timed_out'])}")
    return "\n".join(lines) + "\n\n" + format_snapshot(result.after)


def format_sweep(results: Sequence[RunResult]) -> str:
    """One line per run: order, kill point, mode, done/receipts before → after, outcome."""
    rows = [
        (
            r.spec.order,
            r.spec.kill_at,
            r.spec.kill_mode,
            f"{r.before.done}/{r.before.receipts} → {r.after.done}/{r.after.receipts}",
            r.outcome,
        )
        for r in results
    ]
    return format_grid(("order", "kill at", "mode", "done/receipts", "outcome"), rows)
