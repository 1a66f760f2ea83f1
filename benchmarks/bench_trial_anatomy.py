"""Where a trial's time goes, beside the graph's own clean run, part by part.

    python benchmarks/bench_trial_anatomy.py [--runs N]

Runs N clean runs and N kill-and-recover trials of study 004's linear graph (sync), taking
turns, each as one call through the trial server, and cuts each call at the moments its run
folder recorded: the ledger's lines and the parent's note of the kill. Worker and server read
the same clock (`time.monotonic_ns()`), and so does this script around each call, so the parts
add up to the call:

    clean  the call until a starts | a -> c starts | c -> d ends | d ends -> the reply
    trial  the call until a starts | a -> c starts | c -> the kill | the kill -> c starts
           again, in the recovery | c -> d ends | d ends -> the reply

Prints each part's median and what the trial spends beyond the clean run in it: the gap that
`bench_durability.py`'s ratio measures, where it comes from.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from timing import new_file_line

from labkit.bench.ledger import read_ledger
from labkit.bench.trace import read_json_lines
from labkit.studies.durability.experiment import DurabilitySpec, clean_run_seconds, run_trials

PARTS = (
    ("to_a", "the call, until node a starts"),
    ("a_to_c", "a starts -> c starts"),
    ("c_to_kill", "c starts -> the kill (a pause, a freeze)"),
    ("kill_to_c", "the kill -> c starts again, in the recovery"),
    ("c_to_d", "c starts -> d ends (trial: in the recovery)"),
    ("after_d", "d ends -> the call returns"),
    ("call", "the whole call"),
)


def clean_parts(out: Path) -> dict[str, int]:
    """A clean run's call, cut at its ledger's lines (nanoseconds)."""
    started = time.monotonic_ns()
    clean_run_seconds(DurabilitySpec(), out)
    ended = time.monotonic_ns()
    at = {(line["node"], line["phase"]): line["t_ns"] for line in read_ledger(out)}
    return {
        "to_a": at["a", "start"] - started,
        "a_to_c": at["c", "start"] - at["a", "start"],
        "c_to_d": at["d", "end"] - at["c", "start"],
        "after_d": ended - at["d", "end"],
        "call": ended - started,
    }


def trial_parts(out: Path) -> dict[str, int]:
    """A trial's call, cut at its ledger's lines (the first worker's, then the recovery's: c
    starts twice) and at the parent's note of the kill."""
    started = time.monotonic_ns()
    [trial] = run_trials([DurabilitySpec("linear", "sync")], 1, out=out)
    ended = time.monotonic_ns()
    assert trial.killed_inside and trial.resumed, trial.failure
    folder = Path(trial.run_dir)
    first, again = [], []
    for line in read_ledger(folder):
        (first if line["pid"] == trial.pids[0] else again).append(line["t_ns"])
    [kill] = [n["t_ns"] for n in read_json_lines(folder / "trace.jsonl") if n["event"] == "kill"]
    return {
        "to_a": first[0] - started,
        "a_to_c": first[-1] - first[0],  # its last line: c's start, where it was killed
        "c_to_kill": kill - first[-1],
        "kill_to_c": again[0] - kill,
        "c_to_d": again[-1] - again[0],
        "after_d": ended - again[-1],
        "call": ended - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="clean runs, and as many trials")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    found: dict[str, list[dict[str, int]]] = {"clean": [], "trial": []}
    with tempfile.TemporaryDirectory() as scratch:  # every run folder goes, once it is read
        print(new_file_line(Path(scratch)))
        folders = (Path(scratch) / f"run-{i}" for i in range(10**6))
        clean_parts(next(folders))  # the server's start is no part of either
        for _ in range(args.runs):
            found["clean"].append(clean_parts(next(folders)))
            found["trial"].append(trial_parts(next(folders)))
    print(f"{'part (medians, ms)':48} {'clean':>7} {'trial':>7} {'trial - clean':>14}")
    for key, what in PARTS:
        clean, trial = (median_ms(found[side], key) for side in ("clean", "trial"))
        beyond = "" if clean is None else f"{trial - clean:+14.2f}"
        print(f"{what:48} {'-' if clean is None else f'{clean:7.2f}':>7} {trial:7.2f} {beyond}")
    ratio = median_ms(found["trial"], "call") / median_ms(found["clean"], "call")
    print(f"ratio of the calls' medians: {ratio:.2f} x ({args.runs} of each)")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


def median_ms(runs: list[dict[str, int]], key: str) -> float | None:
    values = [run[key] for run in runs if key in run]
    return statistics.median(values) / 1e6 if values else None


if __name__ == "__main__":
    main()
