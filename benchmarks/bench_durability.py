"""Study 004's trials beside the graph's own durable clean run, all in the same rounds.

    python benchmarks/bench_durability.py [--rounds N] [--forked N] [--matrix-rounds N] [--fresh 0]

Prints, in one run, timed in rounds that take turns (so that a loaded machine's drift slows
every side alike): the graph's own clean run (linear, sync), timed as a call from here through
the trial server and, of the same runs, its `invoke` timed inside its worker; the
kill-and-recover trial with workers forked from the trial server (and with a fresh interpreter
per worker, unless `--fresh 0`), and study 004's 24-kill matrix, each timed as a call. Then
the ratios, each with its spread over single rounds: trial / clean run (target <= 1.5) and
matrix / clean run (target <= 35), both sides as calls (the targets' figures, as issue 31
measured them) and over the clean run's invoke alone (stricter); fresh / forked (>= 50).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from timing import CALL, interleaved_medians, new_file_line, ratio_line

from labkit.studies.durability.experiment import (
    DurabilitySpec,
    clean_run_seconds,
    durability_matrix,
    run_trials,
)

TARGETS = {"trial": 1.5, "matrix": 35, "fresh": 50}
SENSE = {"trial": "<=", "matrix": "<=", "fresh": ">="}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds")
    parser.add_argument(
        "--fresh", type=int, choices=(0, 1), default=1, help="a fresh trial a round"
    )
    parser.add_argument("--forked", type=int, default=7, help="forked trials (and clean runs)")
    parser.add_argument("--matrix-rounds", type=int, default=3, help="rounds with one matrix")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:  # every run folder goes, once it is timed
        print(new_file_line(Path(scratch)))
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
    sides = {"clean": (clean, k), "forked": (trial("fork"), k)}
    if args.fresh:
        sides["fresh"] = (trial("fresh"), 1)
    rounds = interleaved_medians(n, sides, timed_inside=frozenset({"clean"}))
    m = args.matrix_rounds
    matrix_rounds = interleaved_medians(
        m, {"clean": (clean, k), "matrix": (matrix, 1)}, timed_inside=frozenset({"clean"})
    )
    median = {name: statistics.median(times) for name, times in rounds.items()}
    rows = [
        ("graph's own clean run, as a call", f"{median['clean' + CALL] * 1000:8.1f} ms"),
        ("  of which its invoke, in its worker", f"{median['clean'] * 1000:8.1f} ms"),
        ("trial, workers forked, as a call", f"{median['forked'] * 1000:8.1f} ms"),
    ]
    if args.fresh:
        rows.append(("trial, a fresh interpreter per worker", f"{median['fresh'] * 1000:8.1f} ms"))
    rows.append(
        ("24-kill matrix, as a call", f"{statistics.median(matrix_rounds['matrix']):8.2f} s ")
    )
    for what, figure in rows:
        print(f"{what + ':':44} {figure}")
    print(f"({n} rounds of {k} clean runs and {k} trials; {m} rounds of one matrix and {k} runs)")
    # The target's figures: both sides timed the same way, as calls from here through the
    # trial server (as issue 31 timed them). The clean run's own invoke leaves out what any
    # call pays (the request, a worker's start and teardown, the reply): a stricter figure.
    ratios = [
        ("ratio trial / clean run, both as calls", "forked", rounds, "clean" + CALL, "trial"),
        ("ratio trial / clean run's invoke", "forked", rounds, "clean", None),
        (
            "ratio matrix / clean run, both as calls",
            "matrix",
            matrix_rounds,
            "clean" + CALL,
            "matrix",
        ),
        ("ratio matrix / clean run's invoke", "matrix", matrix_rounds, "clean", None),
    ]
    if args.fresh:
        ratios.append(("ratio fresh / forked", "fresh", rounds, "forked", "fresh"))
    for what, over, series, under, target in ratios:
        overall, low, high = ratio_line(series[over], series[under])
        aim = f"; target {SENSE[target]} {TARGETS[target]}" if target else "; stricter, no target"
        print(f"{what + ':':44} {overall:8.2f} x  (rounds {low:.2f}-{high:.2f}{aim})")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
