"""How fast is the crash explorer? Every crash point of lesson 4's linear graph, and the crash
states a second it explores of a SQLite step.

    python benchmarks/bench_explorer.py [--rounds N] [--commits N] [--restart-at now,day]

After one exploration that starts the trial server (not timed), prints the median wall time
of exploring every crash point of study 004's linear graph under durability "sync" (target
< 1 s), and the crash states explored a second of a step like lesson 2's that commits
`--commits` idempotent receipts and then done=1, one crash point after each (target >= 50 on
two cores), both as the caller sees them and as the exploration timed itself, rounds taking
turns, each said met or not; the CPU that every process spends per exploration of the graph
(the trial server and every worker it reaped, read from /proc around each) and per crash
state of the step (so what idle cores would do: on a loaded machine, the figure to compare);
and the load average, since other work on the machine slows both. A crash state costs the
fork its recording kills at the point (a graph under "async": a worker that runs to the
point) and a recovery per restart; a step's last restart, "hash", is a new interpreter. A
graph's later restarts run only if the recovery at once read a moved clock: how many were
taken from it is printed.
`--restart-at now` measures one recovery a state.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import tempfile
import textwrap
from pathlib import Path

from timing import interleaved_medians

import labkit as lk
from labkit.bench import server

LINEAR = "labkit.studies.explorer.lab:linear"
STEP = """
from labkit.studies.commit_window.stores import KEY, PAYLOAD

def step(control, effect, gate):
    for i in range({commits}):
        with effect:
            effect.add_receipt_once(f"{{KEY}}:{{i}}", PAYLOAD)
    with control:
        control.mark_done()
"""


def cpu_of_ended_children() -> float:
    """CPU seconds of every child process that has ended, and of theirs (the servers' workers)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def server_cpu(pid: int) -> float:
    """CPU seconds of a server process and of every child it has reaped (its workers, theirs):
    read around one exploration, what that exploration cost on every core."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def met(yes: bool) -> str:
    return "met" if yes else "NOT met"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of one of each")
    parser.add_argument("--commits", type=int, default=24, help="the step's receipts")
    parser.add_argument(
        "--restart-at", help="when each crash state is recovered (default: each kind's own)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folders = (Path(scratch) / f"explore-{i}" for i in range(10**6))
        step = Path(scratch) / "many_commits.py"
        step.write_text(textwrap.dedent(STEP.format(commits=args.commits)))
        found: dict[str, list] = {"graph": [], "step": []}
        graph_cpu: list[float] = []
        graph_taken: list[int] = []  # recoveries taken from the one at once (`clock_reads`)

        def explore(kind: str, target: str) -> None:
            options = {"restart_at": args.restart_at} if args.restart_at else {}
            found[kind].append(lk.explore(target, kind=kind, out=next(folders), **options))

        def explore_graph() -> None:
            before = server_cpu(trial)
            explore("graph", LINEAR)
            graph_cpu.append(server_cpu(trial) - before)
            reports = Path(found["graph"][-1].folder).glob("point-*/after-*/recovery.json")
            graph_taken.append(sum("same_as" in json.loads(r.read_text()) for r in reports))

        explore("graph", LINEAR)  # starts the trial server: not timed
        trial = server.call("os:getpid")
        explore("step", f"{step}:step")  # and the light one
        load_before = os.getloadavg()[0]
        medians = interleaved_medians(
            args.rounds,
            {
                "graph": (explore_graph, 1),
                "step": (lambda: explore("step", f"{step}:step"), 1),
            },
        )
        load_after = os.getloadavg()[0]
        server.stop()  # the servers and all their workers have ended: their CPU can be read
        cpu_before = cpu_of_ended_children()
        for _ in range(args.rounds):
            explore("step", f"{step}:step")
        server.stop()
        cpu = (cpu_of_ended_children() - cpu_before) / args.rounds
    graph, step_wall = (statistics.median(medians[k]) for k in ("graph", "step"))
    linear, steps = found["graph"][-1], found["step"][-1]
    inside = statistics.median(e.seconds for e in found["graph"][1:])
    states = steps.crash_states
    step_inside = statistics.median(e.seconds for e in found["step"][1 : args.rounds + 2])
    per_state = cpu / states  # with the light server's start, shared by every state
    cores = os.cpu_count()
    graph_restarts, step_restarts = linear.spec["restarts"], steps.spec["restarts"]
    print(
        f"linear graph (sync), every crash point: {graph:6.2f} s  (target < 1 s: {met(graph < 1)})"
    )
    print(
        f"  {linear.crash_points} crash points, {linear.crash_states} crash states, each "
        f"recovered after {len(graph_restarts)} restarts ({', '.join(graph_restarts)}); "
        f"the exploration itself {inside:.2f} s ({args.rounds} rounds)"
    )
    taken = statistics.median(graph_taken)
    print(
        f"  of its {linear.crash_states * len(graph_restarts)} recoveries, {taken:.0f} taken from "
        "the one at once (the code read no clock a restart moves: they would do the same)"
    )
    cpu_graph = statistics.median(graph_cpu)
    print(
        f"  CPU of every process, an exploration: {cpu_graph:.2f} s "
        f"({cpu_graph / linear.crash_states * 1000:.0f} ms a crash state): on {cores} idle "
        f"cores at best {cpu_graph / cores:.2f} s"
    )
    recoveries = states * len(step_restarts) / step_wall
    print(
        f"SQLite step, {states} crash states:       {states / step_wall:6.1f} crash states/s, "
        f"{recoveries:.1f} recoveries/s after {len(step_restarts)} restarts "
        f"({', '.join(step_restarts)}) (target >= 50 states/s, restarts counted as states: "
        f"{met(recoveries >= 50)}; the exploration itself {states / step_inside:.1f} states/s)"
    )
    print(
        f"  CPU per crash state, every process: {per_state * 1000:.1f} ms: {cores} idle cores "
        f"would explore {cores / per_state:.0f}/s"
    )
    print(f"load average: {load_before:.2f} before, {load_after:.2f} after ({cores} cores)")


if __name__ == "__main__":
    main()
