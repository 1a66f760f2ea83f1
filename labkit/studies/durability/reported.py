"""Study 004's figures, as the study reported them (Windows 11, CPython 3.13.12, langgraph
1.2.18, TerminateProcess), beside the same figures computed from this machine's own runs.

The study's numbers are quoted, never used as today's: `today_figures` computes every one of
today's from the trials, clean runs and pitfall report the lesson has just run, as numbers and
spans; the view (`labkit.views.durability_reported.beside_today`) says them.
"""

from __future__ import annotations

from collections.abc import Sequence

from labkit.bench.errors import check_items, refusal
from labkit.studies.durability.experiment import BASELINE_LINES, DURABILITY_MODES, Trial

__all__ = ["STUDY_004_FIGURES", "Span", "today_figures"]

LINEAR_NODES = BASELINE_LINES["linear"] // 2  # a start and an end line per node
COST_ORDER = ("exit", "async", "sync")  # the order the study gives its clean-run figures in
# The figures the study reported, in the order the lesson shows them; its words for each are
# the catalogue's ("durability.reported.study.<figure>"), said by the view.
STUDY_004_FIGURES = (
    "slow_async_extra_lines",
    "slow_sync_repeats",
    "writes_at_kill",
    "rerun_drift",
    "clean_seconds_local",
    "clean_checkpoints_local",
    "clean_seconds_slow",
    "sync_extra_cost",
    "mistyped_mode",
)


Span = tuple[int, int] | None  # the least and the most of some counts; None: none counted


def span(values: Sequence[int]) -> Span:
    """(least, most) of `values`, or None if there is nothing to count."""
    return (min(values), max(values)) if values else None


def clean_figures(clean: dict, slow_ms: int, figure: str) -> list[float | int]:
    """One figure of the clean runs, in the study's order of the modes (COST_ORDER)."""
    return [clean[slow_ms][m][figure] for m in COST_ORDER]


def today_figures(
    matrix: Sequence[Trial], slow: Sequence[Trial], clean: dict, mistyped: dict
) -> dict[str, dict]:
    """Each of the study's figures as today's runs gave it, as fields. `matrix`: the 24-kill
    matrix; `slow`: parallel trials on the 250 ms put(); `clean`: {0: {mode: clean_run(...)},
    250: {...}} for the three modes; `mistyped`: what run_pitfall("mistyped_durability")
    returned."""
    check_items("matrix", matrix, Trial, "matrix_trials")
    check_items("slow", slow, Trial, "slow_trials")
    if not (isinstance(clean, dict) and {0, 250} <= set(clean)):
        raise refusal("clean_form")
    parallel = [t for t in matrix if t.spec.graph == "parallel"]
    slow_in = {m: [t for t in slow if t.spec.mode == m] for m in DURABILITY_MODES}
    resumed = [t for t in slow_in["async"] if t.resumed]
    writes = {m: [t.writes for t in parallel if t.spec.mode == m] for m in ("sync", "async")}
    sync_s, exit_s = clean[250]["sync"]["seconds"], clean[250]["exit"]["seconds"]
    syncc = next(r for r in mistyped["outcome"] if r["mode"] == "syncc")
    return {
        "slow_async_extra_lines": {
            "extra": span([t.ledger_lines - t.baseline_lines for t in resumed]),
            "baseline": resumed[0].baseline_lines if resumed else None,
            "resumed": len(resumed),
            "trials": len(slow_in["async"]),
            "kept": span([t.checkpoints for t in slow_in["async"]]),
        },
        "slow_sync_repeats": {
            "repeats": span([len(t.rerun_nodes) for t in slow_in["sync"]]),
            "kept": span([t.checkpoints for t in slow_in["sync"]]),
        },
        "writes_at_kill": {
            "sync": sum(writes["sync"]),
            "async_": sum(writes["async"]),
            "sync_trials": len(writes["sync"]),
            "async_trials": len(writes["async"]),
        },
        "rerun_drift": {
            "span": span([len(t.rerun_nodes) for t in [*parallel, *slow] if t.resumed])
        },
        "clean_seconds_local": {"seconds": clean_figures(clean, 0, "seconds")},
        "clean_checkpoints_local": {"counts": clean_figures(clean, 0, "checkpoints")},
        "clean_seconds_slow": {"seconds": clean_figures(clean, 250, "seconds")},
        "sync_extra_cost": {
            "extra": sync_s - exit_s,
            "total": sync_s,
            "share": (sync_s - exit_s) / sync_s,
        },
        "mistyped_mode": {
            "nodes": syncc["nodes_run"],
            "of": LINEAR_NODES,
            "warnings": len(mistyped["warnings"]),
        },
    }
