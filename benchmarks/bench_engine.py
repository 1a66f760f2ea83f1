"""How fast is a crash? A full crash-and-recover trial against bare interpreter starts.

    python benchmarks/bench_engine.py [--rounds N]

Prints the median wall time of one `lk.run("effect_first", "effect")` (fresh files, a first
worker killed by os._exit(91), a snapshot, a recovery worker, a snapshot, results.json),
the median of two bare `python -c pass` starts, timed in rounds that take turns, their ratio
(target <= 3), and the time of the whole sweep in exit mode (target < 1 s).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import interleaved_medians

import labkit as lk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="rounds of 3 calls of each")
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as scratch:
        folders = (Path(scratch) / f"run-{i}" for i in range(10**6))

        def two_bare_starts() -> None:
            for _ in range(2):
                subprocess.run([sys.executable, "-c", "pass"], check=True)

        def one_trial() -> None:
            lk.run("effect_first", "effect", out=next(folders))

        medians = interleaved_medians(
            rounds,
            {
                "bare": (two_bare_starts, 3),
                "trial": (one_trial, 3),
                "sweep": (lambda: lk.sweep(("exit",), out=next(folders)), 1),
            },
        )
    bare, trial, sweep = (statistics.median(medians[k]) for k in ("bare", "trial", "sweep"))
    per_round = sorted(t / b for t, b in zip(medians["trial"], medians["bare"], strict=True))
    print(f"two bare `python -c pass` starts: {bare * 1000:7.1f} ms ({rounds} rounds)")
    print(f"one crash-and-recover trial:      {trial * 1000:7.1f} ms ({rounds} rounds)")
    print(f"ratio trial / two bare starts:    {trial / bare:7.2f}   (target <= 3)")
    print(f"  the same ratio within each round: {per_round[0]:.2f}-{per_round[-1]:.2f}")
    print(f"whole sweep, exit mode, 12 runs:  {sweep * 1000:7.1f} ms (target < 1000)")


if __name__ == "__main__":
    main()
