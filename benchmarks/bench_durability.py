"""Study 004's trials beside the graph's own durable clean run, all in the same rounds.

    python benchmarks/bench_durability.py [--rounds N] [--forked N] [--matrix-rounds N]

Prints, in one run, timed in rounds that take turns (so that a loaded machine's drift slows
every side alike): the graph's own clean run (linear, sync: `invoke` timed inside its worker),
the kill-and-recover trial with workers forked from the trial server and with a fresh
interpreter per worker, and study 004's 24-kill matrix. Then the ratios, each with its spread
over single rounds: trial / clean run (target <= 1.5), matrix / clean run (target <= 35),
fresh / forked (target >= 50).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from timing import interleaved_medians, ratio_line

from labkit.studies.durability.experiment import (
    DurabilitySpec,
    clean_run_seconds,
    durability_matrix,
    run_trials,
)

TARGETS = {"trial": 1.5, "matrix": 35, "fresh": 50}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds; one fresh trial each")
    parser.add_argument("--forked", type=int, default=7, help="forked trials (and clean runs)")
    parser.add_argument("--matrix-rounds", type=int, default=3, help="rounds with one matrix")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:  # every run folder goes, once it is timed
        folders = (Path(scratch) / f"run-{i}" for i in range(10**6))
        measure(args, folders)


def measure(args: argparse.Namespace, folders: Iterator[Path]) -> None:
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    started = time.perf_counter()
    clean_run_seconds(DurabilitySpec(), next(folders))
    warm = time.perf_counter() - started
    print(f"server start (LangGraph imported once) + 1 clean run: {warm:.1f} s")

    def clean():  # the graph's own run: `invoke`, timed inside its worker
        return clean_run_seconds(DurabilitySpec(), next(folders))

    def trial(start_mode: str):  # one call, one trial: what a click costs
        spec = DurabilitySpec("linear", "sync", start_mode=start_mode)
        return lambda: run_trials([spec], 1, out=next(folders))

    def matrix():
        found = durability_matrix(out=next(folders))
        assert len(found) == 24 and all(t.killed_inside for t in found)

    n, k = args.rounds, args.forked
    rounds = interleaved_medians(
        n,
        {"clean": (clean, k), "forked": (trial("fork"), k), "fresh": (trial("fresh"), 1)},
        timed_inside=frozenset({"clean"}),
    )
    m = args.matrix_rounds
    matrix_rounds = interleaved_medians(
        m, {"clean": (clean, k), "matrix": (matrix, 1)}, timed_inside=frozenset({"clean"})
    )
    median = {name: statistics.median(times) for name, times in rounds.items()}
    rows = [
        (
            "graph's own clean run (linear, sync)",
            f"{median['clean'] * 1000:8.1f} ms",
            f"{n} rounds of {k}",
        ),
        (
            "trial, workers forked from the server",
            f"{median['forked'] * 1000:8.1f} ms",
            f"{n} rounds of {k}",
        ),
        (
            "trial, a fresh interpreter per worker",
            f"{median['fresh'] * 1000:8.1f} ms",
            f"{n} rounds of 1",
        ),
        (
            "24-kill matrix (3 modes x 2 graphs x 4)",
            f"{statistics.median(matrix_rounds['matrix']):8.2f} s ",
            f"{m} rounds",
        ),
    ]
    ratios = [
        ("ratio trial / clean run", ratio_line(rounds["forked"], rounds["clean"]), "trial", "<="),
        (
            "ratio matrix / clean run",
            ratio_line(matrix_rounds["matrix"], matrix_rounds["clean"]),
            "matrix",
            "<=",
        ),
        ("ratio fresh / forked", ratio_line(rounds["fresh"], rounds["forked"]), "fresh", ">="),
    ]
    for what, figure, note in rows:
        print(f"{what + ':':44} {figure} ({note})")
    for what, (overall, low, high), target, sense in ratios:
        print(
            f"{what + ':':44} {overall:8.2f} x  (rounds {low:.2f}-{high:.2f}; "
            f"target {sense} {TARGETS[target]})"
        )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
