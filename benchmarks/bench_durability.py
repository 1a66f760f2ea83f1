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

from timing import median_seconds

from labkit.durability import DurabilitySpec, clean_run_seconds, durability_matrix, run_trials


def median_trial_seconds(spec: DurabilitySpec, repeat: int) -> float:
    """Wall time per trial as the caller sees it (the server is already running)."""
    return median_seconds(lambda: run_trials([spec], trials=1), repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=21, help="forked trials to time")
    parser.add_argument("--fresh", type=int, default=3, help="fresh-interpreter trials to time")
    args = parser.parse_args()
    trials, fresh_trials = args.trials, args.fresh
    started = time.perf_counter()
    clean = statistics.median(clean_run_seconds(DurabilitySpec()) for _ in range(7))
    warm = time.perf_counter() - started
    print(f"server start (LangGraph imported once) + 7 clean runs: {warm:.1f} s")
    forked = median_trial_seconds(DurabilitySpec("linear", "sync"), trials)
    fresh = median_trial_seconds(DurabilitySpec("linear", "sync", start_mode="fresh"), fresh_trials)
    started = time.perf_counter()
    matrix = durability_matrix()
    matrix_seconds = time.perf_counter() - started
    rows = [
        ("graph's own clean run (linear, sync)", f"{clean * 1000:8.1f} ms", "median of 7"),
        (
            "trial, workers forked from the server",
            f"{forked * 1000:8.1f} ms",
            f"median of {trials}",
        ),
        (
            "trial, a fresh interpreter per worker",
            f"{fresh * 1000:8.1f} ms",
            f"median of {fresh_trials}",
        ),
        ("ratio fresh / forked", f"{fresh / forked:8.1f} x ", "target >= 50"),
        ("24-kill matrix (3 modes x 2 graphs x 4)", f"{matrix_seconds:8.2f} s ", "target < 3"),
    ]
    for what, figure, note in rows:
        print(f"{what + ':':44} {figure} ({note})")
    assert len(matrix) == 24 and all(t.killed_inside for t in matrix)


if __name__ == "__main__":
    main()
