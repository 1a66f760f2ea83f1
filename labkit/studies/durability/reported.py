"""Study 004's figures, as the study reported them (Windows 11, CPython 3.13.12, langgraph
1.2.18, TerminateProcess), beside the same figures computed from this machine's own runs.

The study's numbers are quoted, never used as today's: `beside_today` computes every one of
today's from the trials, clean runs and pitfall report the lesson has just run.
"""

from __future__ import annotations

from collections.abc import Sequence

from labkit.bench.errors import LabError, check_items
from labkit.studies.durability.experiment import BASELINE_LINES, DURABILITY_MODES, Trial

__all__ = ["STUDY_004_REPORTED", "beside_today"]

LINEAR_NODES = BASELINE_LINES["linear"] // 2  # a start and an end line per node
COST_ORDER = ("exit", "async", "sync")  # the order the study gives its clean-run figures in
STUDY_004_REPORTED = {
    "slow_async_extra_lines": "6 to 7 lines beyond the clean run's 10 (1 checkpoint kept)",
    "slow_sync_repeats": "0 to 3 repeats (3 checkpoints kept)",
    "writes_at_kill": "sync 11 rows, async 14 rows (the same graph, 4 samples each)",
    "rerun_drift": "between 1 and 4 (same graph, same kill point)",
    "clean_seconds_local": "0.56 / 0.55 / 0.58 s",
    "clean_checkpoints_local": "1 / 5 / 5",
    "clean_seconds_slow": "0.81 / 1.33 / 1.90 s",
    "sync_extra_cost": "1.1 s of 1.9 s: 58 %",
    "mistyped_mode": "runs to the end, n=5 (its 5-node graph), no warning",
}
LABELS = {
    "slow_async_extra_lines": "parallel graph, 250 ms put(), async: ledger lines after recovery",
    "slow_sync_repeats": "parallel graph, 250 ms put(), sync: node runs repeated",
    "writes_at_kill": "`writes` rows at the kill, parallel graph, summed over its trials",
    "rerun_drift": "nodes run again, parallel graph, over every trial that resumed",
    "clean_seconds_local": "clean run, local file, exit / async / sync: seconds",
    "clean_checkpoints_local": "clean run, local file, exit / async / sync: checkpoints",
    "clean_seconds_slow": "clean run, 250 ms put(), exit / async / sync: seconds",
    "sync_extra_cost": "what sync costs beyond exit on the 250 ms put()",
    "mistyped_mode": "durability='syncc'",
}


def span(values: Sequence[int]) -> str:
    """3, or 1 to 4; "none" if there is nothing to count."""
    if not values:
        return "none"
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low} to {high}"


def clean_figures(clean: dict, slow_ms: int, figure: str) -> str:
    return " / ".join(
        f"{clean[slow_ms][m]['seconds']:.2f} s"
        if figure == "seconds"
        else str(clean[slow_ms][m][figure])
        for m in COST_ORDER
    )


def beside_today(
    matrix: Sequence[Trial], slow: Sequence[Trial], clean: dict, mistyped: dict
) -> list[tuple[str, str, str]]:
    """(figure, what study 004 reported, what today's runs gave) for each of the study's
    figures. `matrix`: the 24-kill matrix; `slow`: parallel trials on the 250 ms put();
    `clean`: {0: {mode: clean_run(...)}, 250: {...}} for the three modes; `mistyped`:
    what run_pitfall("mistyped_durability") returned."""
    check_items("matrix", matrix, Trial, "the trials durability_matrix returns")
    check_items("slow", slow, Trial, "the trials of the 250 ms checkpointer")
    if not (isinstance(clean, dict) and {0, 250} <= set(clean)):
        raise LabError("clean must map 0 and 250 (ms) to {mode: clean_run(...)} for the 3 modes")
    parallel = [t for t in matrix if t.spec.graph == "parallel"]
    slow_in = {m: [t for t in slow if t.spec.mode == m] for m in DURABILITY_MODES}
    resumed = [t for t in slow_in["async"] if t.resumed]
    extra = span([t.ledger_lines - t.baseline_lines for t in resumed])
    writes = {m: [t.writes for t in parallel if t.spec.mode == m] for m in ("sync", "async")}
    sync_s, exit_s = clean[250]["sync"]["seconds"], clean[250]["exit"]["seconds"]
    syncc = next(r for r in mistyped["outcome"] if r["mode"] == "syncc")
    today = {
        "slow_async_extra_lines": (
            f"{extra} lines beyond the clean run's {resumed[0].baseline_lines} in the "
            f"{len(resumed)} of {len(slow_in['async'])} trials that resumed"
            if resumed
            else f"none of the {len(slow_in['async'])} trials could resume"
        )
        + f" (checkpoints kept: {span([t.checkpoints for t in slow_in['async']])})",
        "slow_sync_repeats": f"{span([len(t.rerun_nodes) for t in slow_in['sync']])} repeats "
        f"(checkpoints kept: {span([t.checkpoints for t in slow_in['sync']])})",
        "writes_at_kill": f"sync {sum(writes['sync'])} rows, async {sum(writes['async'])} rows "
        f"({len(writes['sync'])} and {len(writes['async'])} trials)",
        "rerun_drift": span([len(t.rerun_nodes) for t in [*parallel, *slow] if t.resumed]),
        "clean_seconds_local": clean_figures(clean, 0, "seconds"),
        "clean_checkpoints_local": clean_figures(clean, 0, "checkpoints"),
        "clean_seconds_slow": clean_figures(clean, 250, "seconds"),
        "sync_extra_cost": f"{sync_s - exit_s:.2f} s of {sync_s:.2f} s: "
        f"{(sync_s - exit_s) / sync_s:.0%}",
        "mistyped_mode": f"runs to the end, n={syncc['nodes_run']} (of the linear graph's "
        f"{LINEAR_NODES}), {len(mistyped['warnings'])} warnings",
    }
    return [(LABELS[k], STUDY_004_REPORTED[k], today[k]) for k in STUDY_004_REPORTED]
