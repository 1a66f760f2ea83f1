"""How fast is a remote-call trial? One call, its fault and its recovery, against lesson 1's
SQLite crash-and-recover trial.

    python benchmarks/bench_call.py [--rounds N]

Prints the median wall time of one call trial (`reconcile` after `caller_killed`: a first
caller killed right after sending, a recovering caller, the service quiet, both sides read
back, results.json) against a ticket service that is already running, as in a sweep; the
median of one `lk.run("effect_first", "effect")`, timed in rounds that take turns; their
ratio (target <= 3); and the time of the whole 20-trial sweep, service start included.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from timing import interleaved_medians

import labkit as lk
from labkit.studies.unknown_outcome.experiment import CallLab
from labkit.studies.unknown_outcome.spec import CallSpec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="rounds of 3 calls of each")
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as scratch:
        folders = (Path(scratch) / f"run-{i}" for i in range(10**6))
        with CallLab(Path(scratch) / "service") as lab:

            def one_call() -> None:
                folder = next(folders)
                folder.mkdir()
                lab.trial(CallSpec("reconcile", "caller_killed"), folder)

            medians = interleaved_medians(
                rounds,
                {
                    "sqlite": (lambda: lk.run("effect_first", "effect", out=next(folders)), 3),
                    "call": (one_call, 3),
                },
            )
        sweep = interleaved_medians(1, {"sweep": (lambda: lk.sweep_calls(out=next(folders)), 1)})
    sqlite, call = (statistics.median(medians[k]) for k in ("sqlite", "call"))
    per_round = sorted(c / s for c, s in zip(medians["call"], medians["sqlite"], strict=True))
    print(f"lesson 1's SQLite trial:          {sqlite * 1000:7.1f} ms ({rounds} rounds)")
    print(f"one call trial (service running): {call * 1000:7.1f} ms ({rounds} rounds)")
    print(f"ratio call / SQLite trial:        {call / sqlite:7.2f}   (target <= 3)")
    print(f"  the same ratio within each round: {per_round[0]:.2f}-{per_round[-1]:.2f}")
    print(f"whole call sweep, 20 trials:      {sweep['sweep'][0] * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
