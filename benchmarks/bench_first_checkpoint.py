"""Lesson 8's first-checkpoint distribution (#8764): how long 200 killed-and-recovered trials
per durability mode take, each trial two workers forked from the trial server.

    python benchmarks/bench_first_checkpoint.py [--trials N] [--margin 0.1]

Prints, per mode: the wall time of the whole distribution (target < 30 s for 200 trials), the
median and 90th-percentile trial, and what the trials found (what the checkpoint file held at
the kill, how many accepted runs were lost), so a figure always comes with its outcome. With
`--margin`, each mode stops as the lesson's does, once its lost share is known to within it.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from labkit.studies.retries.experiment import default_retry_table, first_checkpoint
from labkit.studies.retries.spec import FIRST_MODES

TARGET_SECONDS = 30  # for 200 trials of one mode, on 2 busy cores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200, help="trials per mode (default 200)")
    parser.add_argument("--margin", type=float, default=0.0, help="stop a mode early (0.1)")
    args = parser.parse_args()
    started = time.perf_counter()
    default_retry_table()  # starts the trial server: LangGraph imported once, graphs compiled
    print(f"trial server start (LangGraph imported once): {time.perf_counter() - started:.1f} s")
    with tempfile.TemporaryDirectory() as scratch:  # every trial folder goes, once it is timed
        for mode in FIRST_MODES:
            started = time.perf_counter()
            out = Path(scratch) / mode
            result = first_checkpoint(mode, args.trials, out=out, margin=args.margin)
            seconds = time.perf_counter() - started
            trial_ms = sorted(run["ms"] for run in result["runs"])
            p90 = trial_ms[int(0.9 * (len(trial_ms) - 1))]
            saved = ", ".join(f"{word} {n}" for word, n in result["saved"].items())
            target = f" (target < {TARGET_SECONDS} s for 200)" if result["trials"] == 200 else ""
            print(
                f"{mode:>5}: {result['trials']} trials in {seconds:5.1f} s{target}; a trial "
                f"{statistics.median(trial_ms):.0f} ms median, {p90:.0f} ms p90; held at the "
                f"kill: {saved}; lost {result['lost']}, failed {result['failed']}"
            )
            assert result["failed"] == 0


if __name__ == "__main__":
    main()
