"""How fast is a lease race? Two workers, one frozen and thawed, against lesson 1's trial.

    python benchmarks/bench_leases.py [--rounds N]

Prints the median wall time of one race (`lease_with_fence`, w1 frozen past its lease: two
fresh workers, a SIGSTOP and a SIGCONT, both files read back, results.json) against the median
of one `lk.run("effect_first", "effect")`, timed in rounds that take turns; their ratio (target
<= 2: a race is two worker starts, as a crash-and-recover trial is); and the time of the
15-race sweep and of one LangGraph race (two forked resumers, the trial server running).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from timing import interleaved_medians

import labkit as lk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="rounds of 3 runs of each")
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as scratch:
        folders = (Path(scratch) / f"run-{i}" for i in range(10**6))
        medians = interleaved_medians(
            rounds,
            {
                "sqlite": (lambda: lk.run("effect_first", "effect", out=next(folders)), 3),
                "race": (lambda: lk.run_claim("lease_with_fence", 300, 200, next(folders)), 3),
            },
        )
        sweep = interleaved_medians(1, {"sweep": (lambda: lk.sweep_claims(out=next(folders)), 1)})
        lk.run_graph_race("race", out=next(folders))  # the trial server starts here
        graph = interleaved_medians(
            rounds, {"graph": (lambda: lk.run_graph_race("race", out=next(folders)), 1)}
        )
    sqlite, race = (statistics.median(medians[k]) for k in ("sqlite", "race"))
    per_round = sorted(r / s for r, s in zip(medians["race"], medians["sqlite"], strict=True))
    print(f"lesson 1's SQLite trial:           {sqlite * 1000:7.1f} ms ({rounds} rounds)")
    print(f"one lease race (frozen, thawed):   {race * 1000:7.1f} ms ({rounds} rounds)")
    print(f"ratio race / SQLite trial:         {race / sqlite:7.2f}   (target <= 2)")
    print(f"  the same ratio within each round: {per_round[0]:.2f}-{per_round[-1]:.2f}")
    print(f"whole claim sweep, 15 races:       {sweep['sweep'][0] * 1000:7.1f} ms")
    graph_ms = statistics.median(graph["graph"]) * 1000
    print(f"one LangGraph race (server up):    {graph_ms:7.1f} ms ({rounds} rounds)")


if __name__ == "__main__":
    main()
