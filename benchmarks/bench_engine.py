"""How fast is a crash? A full crash-and-recover trial against bare interpreter starts.

    python benchmarks/bench_engine.py [--trials N]

Prints the median wall time of one `lk.run("effect_first", "effect")` (fresh files, a first
worker killed by os._exit(91), a snapshot, a recovery worker, a snapshot, results.json),
the median of two bare `python -c pass` starts, their ratio (target <= 3), and the time of
the whole sweep in exit mode (target < 1 s).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import median_seconds

import labkit as lk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=21)
    trials = parser.parse_args().trials
    with tempfile.TemporaryDirectory() as scratch:
        folders = (Path(scratch) / f"run-{i}" for i in range(10**6))

        def two_bare_starts() -> None:
            for _ in range(2):
                subprocess.run([sys.executable, "-c", "pass"], check=True)

        bare = median_seconds(two_bare_starts, trials)
        trial = median_seconds(lambda: lk.run("effect_first", "effect", out=next(folders)), trials)
        sweep = median_seconds(lambda: lk.sweep(("exit",), out=next(folders)), max(trials // 4, 3))
    print(f"two bare `python -c pass` starts: {bare * 1000:7.1f} ms (median of {trials})")
    print(f"one crash-and-recover trial:      {trial * 1000:7.1f} ms (median of {trials})")
    print(f"ratio trial / two bare starts:    {trial / bare:7.2f}   (target <= 3)")
    print(f"whole sweep, exit mode, 12 runs:  {sweep * 1000:7.1f} ms (target < 1000)")


if __name__ == "__main__":
    main()
