"""The one timing helper both benchmarks use."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_seconds(action: Callable[[], object], repeat: int) -> float:
    """The median wall time of `repeat` calls of `action`."""
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)
