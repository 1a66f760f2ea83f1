"""Study 004's trials: forked from the preloaded trial server vs a fresh interpreter per worker.

    python benchmarks/bench_durability.py [--trials N]

Prints, in one run: the median kill-and-recover trial (linear graph, sync) with workers forked
from the server and with a fresh interpreter per worker, their ratio (target >= 50), the
graph's own clean run, and the study's 24-kill matrix (target < 3 s).
"""

from __future__ import annotations

import argparse
import statistics
import time

from labkit.durability import DurabilitySpec, clean_run_seconds, durability_matrix, run_trials


def median_trial_seconds(spec: DurabilitySpec, repeat: int) -> float:
    """Wall time per trial as the caller sees it (the server is already running)."""
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        run_trials([spec], trials=1)
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=21)
    trials = parser.parse_args().trials
    started = time.perf_counter()
    clean = statistics.median(clean_run_seconds(DurabilitySpec()) for _ in range(7))
    warm = time.perf_counter() - started
    print(f"server start (LangGraph imported once) + 7 clean runs: {warm:.1f} s")
    forked = median_trial_seconds(DurabilitySpec("linear", "sync"), trials)
    fresh = median_trial_seconds(DurabilitySpec("linear", "sync", start_mode="fresh"), 3)
    started = time.perf_counter()
    matrix = durability_matrix()
    matrix_seconds = time.perf_counter() - started
    print(f"graph's own clean run (linear, sync):        {clean * 1000:8.1f} ms (median of 7)")
    print(
        f"trial, workers forked from the server:       {forked * 1000:8.1f} ms (median of {trials})"
    )
    print(f"trial, a fresh interpreter per worker:       {fresh * 1000:8.1f} ms (median of 3)")
    print(f"ratio fresh / forked:                        {fresh / forked:8.1f} x  (target >= 50)")
    print(f"24-kill matrix (3 modes x 2 graphs x 4):     {matrix_seconds:8.2f} s  (target < 3)")
    assert len(matrix) == 24 and all(t.killed_inside for t in matrix)


if __name__ == "__main__":
    main()
