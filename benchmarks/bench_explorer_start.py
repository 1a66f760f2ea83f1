"""How fast does the crash explorer start, as a project's CI runs it? Side by side, rounds
taking turns:

    python benchmarks/bench_explorer_start.py [--rounds N]

- `labkit explore` from a cold shell on lesson 2's step (a new interpreter, the light server
  started; target < 1 s to its end, so to its first crash point too);
- the same on study 004's 4-node linear graph (the trial server started: LangGraph imported),
  against that graph explored with the server warm (target: cold < 2x warm);
- a graph shaped like LangGraph's tutorial (ToolNode with fallbacks: tests/outside/
  update_tool.py), explored first in a new server (its recording's imports preloaded then:
  `bench.preload`) and again, warm: the time each exploration took, as it timed itself.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import interleaved_medians

import labkit as lk
from labkit.bench import server

ROOT = Path(__file__).resolve().parents[1]
STEP = "labkit.studies.commit_window.worker:effect_first"
LINEAR = "labkit.studies.explorer.lab:linear"
TUTORIAL = f"{ROOT / 'tests' / 'outside' / 'update_tool.py'}:graph"
LABKIT = [sys.executable, "-m", "labkit", "explore"]


def cold(*arguments: str) -> None:
    """`labkit explore` in a new interpreter, as a CI step runs it (exit 1: a failing row)."""
    done = subprocess.run([*LABKIT, *arguments], capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr


def median(times: list[float]) -> float:
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of one of each")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folders = (str(Path(scratch) / f"explore-{i}") for i in range(10**6))

        tutorial: dict[str, list[float]] = {"first": [], "warm": []}  # as it timed itself

        def warm(target: str, kind: str, **options: object) -> float:
            return lk.explore(target, kind=kind, out=next(folders), **options).seconds

        def explore_tutorial(which: str) -> None:
            if which == "first":
                server.stop()
                server.call("os:getpid")  # the server's own start is not the exploration's
            tutorial[which].append(warm(TUTORIAL, "graph", restart_at="now"))

        warm(LINEAR, "graph")  # the trial server, started: not timed
        load_before = os.getloadavg()[0]
        medians = interleaved_medians(
            args.rounds,
            {
                "cold step": (lambda: cold(STEP, "--out", next(folders)), 1),
                "cold linear": (lambda: cold(LINEAR, "--kind", "graph", "--out", next(folders)), 1),
                "warm linear": (lambda: warm(LINEAR, "graph"), 1),
                "tutorial first": (lambda: explore_tutorial("first"), 1),
                "tutorial warm": (lambda: explore_tutorial("warm"), 1),
            },
        )
        load_after = os.getloadavg()[0]
        server.stop()
    step, linear_cold, linear_warm = (
        median(medians[k]) for k in ("cold step", "cold linear", "warm linear")
    )
    first, again = median(tutorial["first"]), median(tutorial["warm"])
    ratio = linear_cold / linear_warm
    print(f"cold shell, lesson 2's step:       {step:5.2f} s (target < 1 s: {met(step < 1)})")
    print(f"cold shell, the 4-node graph:      {linear_cold:5.2f} s")
    print(
        f"warm server, the 4-node graph:     {linear_warm:5.2f} s "
        f"(cold {ratio:.1f}x warm; target < 2x: {met(ratio < 2)})"
    )
    print(f"tutorial-shaped graph, new server: {first:5.2f} s (its imports preloaded once)")
    print(f"tutorial-shaped graph, warm:       {again:5.2f} s")
    cores = os.cpu_count()
    print(f"load average: {load_before:.2f} before, {load_after:.2f} after ({cores} cores)")


def met(yes: bool) -> str:
    return "met" if yes else "NOT met"


if __name__ == "__main__":
    main()
