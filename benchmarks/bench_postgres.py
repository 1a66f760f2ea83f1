"""What does a real Postgres cost the lab? Its trials beside the SQLite ones, the server's start,
and a checkpointer's put().

    python benchmarks/bench_postgres.py [--rounds N] [--puts N]

Prints the median wall time of study 004's kill-and-recover trial (linear, sync, SIGKILL in
c) on SQLite and on PostgresSaver, as a matrix runs them (MATRIX trials a call, the Postgres
schema set up once for them, included), in rounds that take turns, and their ratio (target
<= 2);
the same for the commit window (lesson 1's SQLite trial against `run_window` on Postgres);
the server's start: initdb and start, a start on an existing data folder, a start from a
copied template, a restart after a SIGKILL (WAL replay); and the put() distribution of each
checkpointer (SQLite, the study's 250 ms stub, Postgres) over clean runs.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from timing import interleaved_medians

import labkit as lk
from labkit.bench.postgres.local_server import LocalServer, forget_template
from labkit.studies.durability.experiment import DurabilitySpec, put_latencies, run_trials
from labkit.studies.postgres.experiment import run_window

MATRIX = 4  # trials a call: a matrix sets its Postgres schema up once for all its trials


def seconds(action: object) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def server_starts(scratch: Path) -> dict[str, float]:
    """One server's life, each phase timed: made, stopped, started again, crashed, restarted;
    and a second server started from a copied template."""
    server = LocalServer(scratch / "server")
    (scratch / "server").mkdir()
    times = {"initdb + start": seconds(server.start)}
    server.stop()
    times["start on its data folder"] = seconds(server.start)
    server.crash()
    times["restart after SIGKILL (WAL replay)"] = seconds(server.start)
    server.stop()
    (scratch / "copy").mkdir()
    copied = LocalServer(scratch / "copy", copied=True)
    copied.start()  # the template's initdb happens here, once
    copied.stop()
    (scratch / "copy2").mkdir()
    again = LocalServer(scratch / "copy2", copied=True)
    times["copy of the template + start"] = seconds(again.start)
    again.stop()
    forget_template()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of 3 trials of each")
    parser.add_argument("--puts", type=int, default=10, help="clean runs per checkpointer")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        Path(scratch).chmod(0o711)  # as root, the server runs as nobody, who passes through
        folders = (Path(scratch) / f"run-{i}" for i in range(10**6))
        trial = {
            saver: DurabilitySpec("linear", "sync", checkpointer=saver)
            for saver in ("sqlite", "postgres")
        }
        run_window("one_transaction", "committed", out=next(folders))  # the server, warm
        medians = interleaved_medians(
            args.rounds,
            {
                "sqlite 004": (lambda: run_trials([trial["sqlite"]], MATRIX, next(folders)), 1),
                "postgres 004": (lambda: run_trials([trial["postgres"]], MATRIX, next(folders)), 1),
                "sqlite window": (lambda: lk.run("effect_first", "effect", out=next(folders)), 3),
                "postgres window": (
                    lambda: run_window("effect_first", "effect", out=next(folders)),
                    3,
                ),
            },
        )
        starts = server_starts(Path(scratch))
    latencies = put_latencies(args.puts)
    m = {name: statistics.median(times) * 1000 for name, times in medians.items()}
    m["sqlite 004"] /= MATRIX
    m["postgres 004"] /= MATRIX
    print(f"study 004 trial, SQLite:           {m['sqlite 004']:7.1f} ms ({args.rounds} rounds)")
    print(f"study 004 trial, PostgresSaver:    {m['postgres 004']:7.1f} ms")
    ratio = m["postgres 004"] / m["sqlite 004"]
    print(f"ratio Postgres / SQLite trial:     {ratio:7.2f}   (target <= 2)")
    print(f"commit window, lesson 1's SQLite:  {m['sqlite window']:7.1f} ms")
    print(f"commit window on Postgres:         {m['postgres window']:7.1f} ms")
    print(f"ratio Postgres / SQLite window:    {m['postgres window'] / m['sqlite window']:7.2f}")
    for phase, took in starts.items():
        print(f"server: {phase + ':':36} {took * 1000:7.1f} ms")
    for name, times in latencies.items():
        ordered = sorted(times)
        p90 = ordered[int(0.9 * (len(ordered) - 1))]
        print(
            f"put() {name:11} median {statistics.median(ordered):6.1f} ms, p90 {p90:6.1f} ms, "
            f"max {ordered[-1]:6.1f} ms ({len(ordered)} calls)"
        )


if __name__ == "__main__":
    main()
