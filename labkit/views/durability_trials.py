"""Study 004's trial table in words, for a notebook and a terminal alike: what the kill left
and what recovery did ("nothing to resume: the run is lost", not "resumed no"). No IPython
and no matplotlib here, so `labkit durability` prints the lesson's own table."""

from __future__ import annotations

from collections.abc import Sequence

from labkit.language import say
from labkit.language.failures import failure_text
from labkit.studies.durability.experiment import Trial
from labkit.views.tables import headers
from labkit.views.text import format_grid

__all__ = ["TRIAL_COLUMNS", "format_trials", "trial_headers", "trial_outcome", "trial_rows"]

ASKED = 4  # the first columns say what a trial was asked to do (its spec), the rest what it found
TRIAL_COLUMNS = (  # the trial table's columns, by their key in the catalogue
    *("graph", "durability", "slow_ms", "kill_moment", "first_exit", "killed_inside"),
    *("checkpoints", "writes", "orphan_writes", "ledger", "recovery"),
)


def trial_outcome(trial: Trial) -> str:
    """In words: failed (and why), lost (nothing to resume), or how much ran again."""
    if trial.failure:
        return say("durability.trial.failed", failure=failure_text(trial.failure))
    if not trial.resumed:
        return say("durability.trial.lost")
    nodes = ", ".join(trial.rerun_nodes) or say("durability.trial.nothing")
    extra = trial.ledger_lines - trial.baseline_lines
    return say("durability.trial.resumed", nodes=nodes, extra=extra)


def trial_headers() -> list[str]:
    return headers("durability.column", TRIAL_COLUMNS)


def trial_rows(trials: Sequence[Trial]) -> list[tuple]:
    """One row per trial: what the kill left, and what recovery did with it."""
    return [
        (
            t.spec.graph,
            t.spec.mode,
            t.spec.slow_ms,
            t.spec.kill_moment,
            t.first_exit,
            say("durability.trial.inside" if t.killed_inside else "durability.trial.outside"),
            t.checkpoints,
            t.writes,
            t.orphan_writes,
            f"{t.ledger_lines} / {t.baseline_lines}",
            trial_outcome(t),
        )
        for t in trials
    ]


def format_trials(trials: Sequence[Trial]) -> str:
    """The trial table for a terminal. What every trial was asked alike (the graph, the mode,
    the slow ms, the kill moment: one spec, as `labkit durability` runs) is said once above it,
    and the table keeps what the trials found: it fits a projector's 100 columns then."""
    header, rows = trial_headers(), trial_rows(trials)
    alike = [i for i in range(ASKED) if rows and len({row[i] for row in rows}) == 1]
    kept = [i for i in range(len(header)) if i not in alike]
    table = format_grid([header[i] for i in kept], [[row[i] for i in kept] for row in rows])
    if not alike:
        return table
    pairs = [say("facts.pair", label=header[i], value=rows[0][i]) for i in alike]
    return say("facts.separator").join(pairs) + "\n" + table
