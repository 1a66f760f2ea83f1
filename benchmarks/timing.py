"""The one timing helper both benchmarks use."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def interleaved_medians(
    rounds: int, actions: dict[str, tuple[Callable[[], object], int]]
) -> dict[str, list[float]]:
    """Each action's median wall time per round, over `rounds` rounds in which the actions take
    turns (`name: (action, calls per round)`). A shared machine's speed drifts by tens of
    percent within minutes; taking turns makes the drift slow every action alike, so the
    ratio of two actions measured in the same round is steadier than either figure."""
    medians: dict[str, list[float]] = {name: [] for name in actions}
    for _ in range(rounds):
        for name, (action, calls) in actions.items():
            timings = []
            for _ in range(calls):
                started = time.perf_counter()
                action()
                timings.append(time.perf_counter() - started)
            medians[name].append(statistics.median(timings))
    return medians
