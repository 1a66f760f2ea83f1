"""What pruning the runs home costs: a home of finished runs, each one's size read from its
marker (as runs record it when they end) against every file of every run walked (what it did
before, and still does for a run whose process died).

A home at its default 200 MB holds some 800 runs of about 90 files each; every server start,
every CLI call and every half minute of a lesson's clicking prunes it once.

    .venv/bin/python benchmarks/bench_prune.py [--runs 800] [--files 90]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 5


def lay_out(runs: int, files: int) -> None:
    """`runs` finished run folders in the (private) runs home, `files` small files each."""
    from labkit.bench.folders import new_run_dir, release_run_dir

    for _ in range(runs):
        folder = new_run_dir(None, "bench-prune-")
        for number in range(files):
            (folder / f"f{number}").write_bytes(b"x" * 100)
        release_run_dir(folder)


def milliseconds(work) -> float:
    """The median of ROUNDS timings of `work()`, in ms."""
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=800)
    parser.add_argument("--files", type=int, default=90)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as private:
        os.environ["TMPDIR"] = private
        tempfile.tempdir = private
        sys.path.insert(0, str(ROOT))
        from labkit.bench import cleaning

        lay_out(args.runs, args.files)
        kept = 1 << 40  # nothing is removed: each round looks at the same home
        read = milliseconds(lambda: cleaning.clean_runs(dry_run=True, keep_bytes=kept))
        cleaning.run_size = lambda folder, marker: cleaning.folder_size(folder)  # as before
        walked = milliseconds(lambda: cleaning.clean_runs(dry_run=True, keep_bytes=kept))
    print(f"a home of {args.runs} finished runs, {args.files} files each (median of {ROUNDS})")
    print(f"prune, sizes read from the markers:   {read:8.1f} ms")
    print(f"prune, every run walked (as before):  {walked:8.1f} ms")
    print(f"ratio walked / read:                  {walked / read:8.1f}x")


if __name__ == "__main__":
    main()
