"""Study 004's figures, as the study reported them (Windows 11, CPython 3.13.12, langgraph
1.2.18, TerminateProcess), beside the same figures computed from this machine's own runs.

The study's numbers are quoted, never used as today's: `beside_today` computes every one of
today's from the trials, clean runs and pitfall report the lesson has just run.
"""

from __future__ import annotations

from collections.abc import Sequence

from labkit.bench.errors import check_items, refusal
from labkit.language import say
from labkit.studies.durability.experiment import BASELINE_LINES, DURABILITY_MODES, Trial

__all__ = ["STUDY_004_FIGURES", "beside_today"]

LINEAR_NODES = BASELINE_LINES["linear"] // 2  # a start and an end line per node
COST_ORDER = ("exit", "async", "sync")  # the order the study gives its clean-run figures in
# The figures the study reported, in the order the lesson shows them; its words for each are
# the catalogue's ("durability.reported.study.<figure>"), in the reader's language.
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


def span(values: Sequence[int]) -> str:
    """3, or 1 to 4; "none" if there is nothing to count."""
    if not values:
        return say("durability.reported.today.none")
    low, high = min(values), max(values)
    return str(low) if low == high else say("durability.reported.today.span", low=low, high=high)


def clean_figures(clean: dict, slow_ms: int, figure: str) -> str:
    return " / ".join(
        say("durability.reported.today.seconds", seconds=clean[slow_ms][m]["seconds"])
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
    check_items("matrix", matrix, Trial, "matrix_trials")
    check_items("slow", slow, Trial, "slow_trials")
    if not (isinstance(clean, dict) and {0, 250} <= set(clean)):
        raise refusal("clean_form")
    parallel = [t for t in matrix if t.spec.graph == "parallel"]
    slow_in = {m: [t for t in slow if t.spec.mode == m] for m in DURABILITY_MODES}
    resumed = [t for t in slow_in["async"] if t.resumed]
    extra = span([t.ledger_lines - t.baseline_lines for t in resumed])
    writes = {m: [t.writes for t in parallel if t.spec.mode == m] for m in ("sync", "async")}
    sync_s, exit_s = clean[250]["sync"]["seconds"], clean[250]["exit"]["seconds"]
    syncc = next(r for r in mistyped["outcome"] if r["mode"] == "syncc")
    sync_kept = span([t.checkpoints for t in slow_in["sync"]])
    async_kept = span([t.checkpoints for t in slow_in["async"]])
    trials = len(slow_in["async"])
    today = {
        "slow_async_extra_lines": (
            say(
                "durability.reported.today.extra_lines",
                extra=extra,
                baseline=resumed[0].baseline_lines,
                resumed=len(resumed),
                trials=trials,
            )
            if resumed
            else say("durability.reported.today.none_resumed", trials=trials)
        )
        + say("durability.reported.today.kept", kept=async_kept),
        "slow_sync_repeats": say(
            "durability.reported.today.repeats",
            repeats=span([len(t.rerun_nodes) for t in slow_in["sync"]]),
            kept=sync_kept,
        ),
        "writes_at_kill": say(
            "durability.reported.today.writes",
            sync=sum(writes["sync"]),
            async_=sum(writes["async"]),
            sync_trials=len(writes["sync"]),
            async_trials=len(writes["async"]),
        ),
        "rerun_drift": span([len(t.rerun_nodes) for t in [*parallel, *slow] if t.resumed]),
        "clean_seconds_local": clean_figures(clean, 0, "seconds"),
        "clean_checkpoints_local": clean_figures(clean, 0, "checkpoints"),
        "clean_seconds_slow": clean_figures(clean, 250, "seconds"),
        "sync_extra_cost": say(
            "durability.reported.today.extra_cost",
            extra=sync_s - exit_s,
            total=sync_s,
            share=(sync_s - exit_s) / sync_s,
        ),
        "mistyped_mode": say(
            "durability.reported.today.mistyped",
            nodes=syncc["nodes_run"],
            of=LINEAR_NODES,
            warnings=len(mistyped["warnings"]),
        ),
    }
    return [
        (say(f"durability.reported.label.{k}"), say(f"durability.reported.study.{k}"), today[k])
        for k in STUDY_004_FIGURES
    ]
