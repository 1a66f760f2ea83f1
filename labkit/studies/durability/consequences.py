"""Choose the durability mode by its consequences (study 004's closing advice), from the lab's
own measurements: what a crash did in each mode (the lesson's matrix of real kills), what a
node costs in each mode (the lesson's clean runs, on the local file and on the 250 ms
checkpointer), and, for a workload a reader sets (node runs per run, runs per day, the share
of runs a crash hits), what a day of it repeats, loses and costs.

Arithmetic only: it runs nothing. The crash rate's day is the workload's expected value; a lost
run's orphaned effects are counted as half its node runs (the crash lands, on average, halfway).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from labkit.bench.errors import check_int, check_number, refusal
from labkit.studies.durability.experiment import BASELINE_LINES, DURABILITY_MODES, Trial

__all__ = [
    "MAX_RUNS",
    "MAX_STEPS",
    "ModeMeasured",
    "PerDay",
    "Workload",
    "measured_modes",
    "per_day",
]

CLEAN_GRAPH = "parallel"  # the lesson's clean runs: study 004's cost figures are on it
MAX_STEPS, MAX_RUNS = 10_000, 10**9


@dataclass(frozen=True)
class ModeMeasured:
    """One mode as the lesson measured it."""

    mode: str
    kills: int  # trials with an outcome (a failed trial claims none)
    lost: int  # kills after which recovery found nothing to resume
    repeated: int  # node runs recovery ran again, over all the resumed kills
    seconds_per_node: dict[int, float]  # slow_ms -> a clean run's seconds / its node runs

    @property
    def lost_share(self) -> float:
        return self.lost / self.kills if self.kills else 0.0

    @property
    def repeats_per_crash(self) -> float:
        return self.repeated / self.kills if self.kills else 0.0


@dataclass(frozen=True)
class Workload:
    """A reader's workload: node runs in one run, runs a day, the share of runs a crash hits."""

    steps: int = 10
    runs_per_day: int = 10_000
    crash_rate: float = 0.001

    def __post_init__(self) -> None:
        check_int("steps per run", self.steps, 1, MAX_STEPS)
        check_int("runs per day", self.runs_per_day, 0, MAX_RUNS)
        check_number("crash rate", self.crash_rate, 0, 1)


@dataclass(frozen=True)
class PerDay:
    """What a day of the workload can expect in one mode."""

    mode: str
    crashes: float
    runs_lost: float
    nodes_repeated: float
    effects_orphaned: float
    hours: dict[int, float]  # slow_ms -> node-run hours a day spent, saves included


def measured_modes(trials: Sequence[Trial], clean: Mapping[int, Mapping[str, Mapping]]) -> list:
    """Per mode, from the lesson's kills (`durability_matrix`) and its clean runs
    (`{slow_ms: {mode: clean_run(DurabilitySpec("parallel", mode, slow_ms))}}`)."""
    nodes = BASELINE_LINES[CLEAN_GRAPH] // 2  # a start and an end line per node
    found = []
    for mode in DURABILITY_MODES:
        done = [t for t in trials if t.spec.mode == mode and t.failure is None]
        if not done:
            raise refusal("no_trial_of_mode", mode=repr(mode))
        costs = {ms: runs[mode]["seconds"] / nodes for ms, runs in clean.items() if mode in runs}
        found.append(
            ModeMeasured(
                mode,
                kills=len(done),
                lost=sum(not t.resumed for t in done),
                repeated=sum(len(t.rerun_nodes) for t in done if t.resumed),
                seconds_per_node=costs,
            )
        )
    return found


def per_day(measured: ModeMeasured, workload: Workload) -> PerDay:
    """The workload's expected day in this mode: each crash repeats and loses as the lesson's
    kills did on average; a lost run leaves half its node runs' effects orphaned."""
    crashes = workload.runs_per_day * workload.crash_rate
    lost = crashes * measured.lost_share
    hours = {
        ms: workload.runs_per_day * workload.steps * seconds / 3600
        for ms, seconds in measured.seconds_per_node.items()
    }
    return PerDay(
        measured.mode,
        crashes=crashes,
        runs_lost=lost,
        nodes_repeated=crashes * measured.repeats_per_crash,
        effects_orphaned=lost * workload.steps / 2,
        hours=hours,
    )
