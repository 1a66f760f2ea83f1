"""Study 004's trials: forked from the preloaded trial server vs a fresh interpreter per worker.

    python benchmarks/bench_durability.py [--rounds N] [--forked N]

Prints, in one run: the median kill-and-recover trial (linear graph, sync) with workers forked
from the server and with a fresh interpreter per worker, timed in rounds that take turns
(each round: `--forked` forked trials, then one fresh trial), their ratio (target >= 50), the
graph's own clean run, and the study's 24-kill matrix (target < 3 s).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from timing import interleaved_medians

from labkit.studies.durability.experiment import (
    DurabilitySpec,
    clean_run_seconds,
    durability_matrix,
    run_trials,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds; one fresh trial each")
    parser.add_argument("--forked", type=int, default=7, help="forked trials per round")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:  # every run folder goes, once it is timed
        folders = (Path(scratch) / f"run-{i}" for i in range(10**6))
        measure(args, folders)


def measure(args: argparse.Namespace, folders: Iterator[Path]) -> None:
    started = time.perf_counter()
    clean = statistics.median(clean_run_seconds(DurabilitySpec(), next(folders)) for _ in range(7))
    warm = time.perf_counter() - started
    print(f"server start (LangGraph imported once) + 7 clean runs: {warm:.1f} s")

    def trial(start_mode: str):  # one call, one trial: what a click costs
        spec = DurabilitySpec("linear", "sync", start_mode=start_mode)
        return lambda: run_trials([spec], 1, out=next(folders))

    rounds = interleaved_medians(
        args.rounds, {"forked": (trial("fork"), args.forked), "fresh": (trial("fresh"), 1)}
    )
    forked, fresh = (statistics.median(rounds[name]) for name in ("forked", "fresh"))
    per_round = sorted(f / k for f, k in zip(rounds["fresh"], rounds["forked"], strict=True))
    started = time.perf_counter()
    matrix = durability_matrix(out=next(folders))
    matrix_seconds = time.perf_counter() - started
    n = args.rounds
    rows = [
        ("graph's own clean run (linear, sync)", f"{clean * 1000:8.1f} ms", "median of 7"),
        ("trial, workers forked from the server", f"{forked * 1000:8.1f} ms", f"{n} rounds"),
        ("trial, a fresh interpreter per worker", f"{fresh * 1000:8.1f} ms", f"{n} rounds"),
        ("ratio fresh / forked", f"{fresh / forked:8.1f} x ", "target >= 50"),
        ("  the same ratio within each round", f"{per_round[0]:.0f}-{per_round[-1]:.0f} x", ""),
        ("24-kill matrix (3 modes x 2 graphs x 4)", f"{matrix_seconds:8.2f} s ", "target < 3"),
    ]
    for what, figure, note in rows:
        print(f"{what + ':':44} {figure}" + (f" ({note})" if note else ""))
    assert len(matrix) == 24 and all(t.killed_inside for t in matrix)


if __name__ == "__main__":
    main()
