"""Soak: many random trials of every kind, Ctrl-C at random moments, then look for what leaked.

    python benchmarks/soak.py [--trials N] [--seed S]

Takes turns through five kinds of trial, each with random choices: a SQLite crash run
(`labkit.run`: order, kill point, kill mode), a LangGraph durability trial, an interrupt run, a
pitfall, and a Ctrl-C: SIGINT, after a random delay, to a `python -m labkit ...` of its own, or
to this process in the middle of a trial-server call (as a kernel gets it). Everything runs with
TMPDIR set to a private folder. At the end, after the trial server is stopped, it checks:

- survivors: processes started under this soak (their environment holds its TMPDIR) still
  alive 10 s later;
- this process's open descriptors, before and after;
- stray files: anything in the private TMPDIR but the runs home (the working folder, also
  inside, must stay empty);
- tracebacks: a Ctrl-C must end a command with one line (exit 130), except during Python's own
  start-up, before any of labkit's code runs: then Python reports in its own words (exit 1,
  "Fatal Python error" or "Could not import runpy module", or exit -2).

It prints one line and exits 1 if anything leaked.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

SURVIVOR_GRACE_S = 10.0
# How Python reports a Ctrl-C while it is still starting (importing `site`, then `runpy`).
PYTHON_START_UP_REPORTS = ("Fatal Python error: init_import_site", "Could not import runpy module")
# A frame in labkit's own modules (the clone's folder may be named anything, "labkit" too).
LABKIT_CODE = str(Path(__file__).resolve().parents[1] / "labkit") + "/"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100, help="trials in all (default 100)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: new)")
    args = parser.parse_args()
    seed = random.randrange(10**6) if args.seed is None else args.seed
    private = Path(tempfile.mkdtemp(prefix="labkit-soak-"))
    try:
        return soak(args.trials, random.Random(seed), seed, private)
    finally:
        shutil.rmtree(private)


def soak(trials: int, rng: random.Random, seed: int, private: Path) -> int:
    os.environ["TMPDIR"] = str(private)  # for this process and every one it starts
    tempfile.tempdir = None  # tempfile asks again
    workdir = private / "cwd"
    workdir.mkdir()
    os.chdir(workdir)

    import labkit as lk
    from labkit.bench import fork_server, server

    descriptors_before = open_descriptors()
    kinds: list[Callable[[random.Random], str]] = [
        sqlite_run,
        durability_trial,
        interrupt_run,
        pitfall,
        ctrl_c,
    ]
    seen: Counter[str] = Counter()
    problems: list[str] = []
    started = time.monotonic()
    for n in range(trials):
        kind = kinds[n % len(kinds)]
        try:
            seen[kind(rng)] += 1
        except Exception as error:  # noqa: BLE001 - every failure is a finding, reported below
            problems.append(f"{kind.__name__}: {type(error).__name__}: {error}")
    server.stop()
    fork_server.stop()
    left = survivors(str(private))
    descriptors_after = open_descriptors()
    home = lk.runs_home().name
    stray = sorted(set(os.listdir(private)) - {home, "cwd"}) + [
        f"cwd/{name}" for name in os.listdir(workdir)
    ]
    if left:
        problems.append(f"survivors: {left}")
    if descriptors_after != descriptors_before:
        problems.append(f"descriptors {descriptors_before} -> {descriptors_after}")
    if stray:
        problems.append(f"stray files: {stray}")
    tally = ", ".join(f"{what} {count}" for what, count in sorted(seen.items()))
    verdict = "OK" if not problems else "FAILED: " + "; ".join(problems)
    print(
        f"soak: {trials} trials in {time.monotonic() - started:.1f} s (seed {seed}; {tally}); "
        f"survivors {len(left)}, descriptors {descriptors_before} -> {descriptors_after}, "
        f"stray files {len(stray)}: {verdict}"
    )
    return 1 if problems else 0


def sqlite_run(rng: random.Random) -> str:
    import labkit as lk

    order = rng.choice(list(lk.ORDERS.values()))
    point = rng.choice([*order.kill_points, lk.NO_KILL])
    result = lk.run(order.name, point, rng.choice(lk.KILL_MODES))
    check(result.outcome in lk.OUTCOMES, f"run {order.name} at {point}: {result.outcome}")
    return "run"


def durability_trial(rng: random.Random) -> str:
    from labkit.studies.durability.experiment import (
        DURABILITY_MODES,
        GRAPHS,
        DurabilitySpec,
        run_trials,
    )

    graph = rng.choice(GRAPHS)
    moment = rng.choice(
        ["target_starts", "others_done"] if graph == "parallel" else ["target_starts"]
    )
    spec = DurabilitySpec(graph, rng.choice(DURABILITY_MODES), kill_moment=moment)
    (trial,) = run_trials([spec], 1)
    check(trial.killed_inside, f"durability trial: {trial.summary()}")
    return "durability"


def interrupt_run(rng: random.Random) -> str:
    from labkit.studies.interrupt_resume.experiment import (
        INTERRUPT_KILL_POINTS,
        KEY_STRATEGIES,
        LAYOUTS,
        run_interrupt,
    )

    cross_process = rng.random() < 0.5
    kill_at = rng.choice(INTERRUPT_KILL_POINTS) if cross_process else "none"
    result = run_interrupt(rng.choice(KEY_STRATEGIES), rng.choice(LAYOUTS), cross_process, kill_at)
    # a run that ends without a failure (mark_first killed before its ticket makes none: lost)
    check(result["failure"] is None, f"interrupt run: {result}")
    return "interrupt"


def pitfall(rng: random.Random) -> str:
    from labkit.studies.durability.pitfalls import PITFALLS, run_pitfall

    report = run_pitfall(rng.choice(list(PITFALLS)))
    check("raised" in report, f"pitfall: {report}")
    return "pitfall"


def ctrl_c(rng: random.Random) -> str:
    """A Ctrl-C at a random moment: to a command line of its own, or to this process itself
    during a trial-server call (the server may be starting)."""
    if rng.random() < 0.5:
        return ctrl_c_in_this_process(rng)
    import labkit as lk
    from labkit.studies.durability.pitfalls import PITFALLS

    order = rng.choice(list(lk.ORDERS.values()))
    command = rng.choice(
        [
            ["durability", "--trials", "20", "--mode", rng.choice(["sync", "async", "exit"])],
            ["sweep", "--kill-mode", "both"],
            ["interrupt", "--cross-process", "--kill-at", "paused"],
            ["pitfall", rng.choice(list(PITFALLS))],
            ["run", order.name, "--kill-at", rng.choice(order.kill_points)],
        ]
    )
    cli = subprocess.Popen(
        [sys.executable, "-m", "labkit", *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the SIGINT reaches it alone, as Ctrl-C reaches a foreground job
    )
    time.sleep(rng.uniform(0, 2.5))
    cli.send_signal(signal.SIGINT)
    _, stderr = cli.communicate(timeout=120)
    what = f"labkit {' '.join(command)}: exit {cli.returncode}"
    check("BrokenPipeError" not in stderr, f"{what}: {stderr}")
    if cli.returncode == -signal.SIGINT or (
        cli.returncode == 1 and any(report in stderr for report in PYTHON_START_UP_REPORTS)
    ):  # Python itself was still starting, before labkit's first line
        check(LABKIT_CODE not in stderr, f"{what}: labkit's code let a Ctrl-C through: {stderr}")
        return "ctrl-c before main"
    check(cli.returncode in (0, 130), f"{what}: {stderr}")
    check("Traceback" not in stderr, f"{what}: {stderr}")
    return "ctrl-c cli" if cli.returncode == 130 else "ctrl-c too late"


def ctrl_c_in_this_process(rng: random.Random) -> str:
    from labkit.studies.durability.experiment import DurabilitySpec, run_trials

    if rng.random() < 0.5:  # a fresh start of the trial server, which takes a second or two
        from labkit.bench import server

        server.stop()
    # to the main thread, as a terminal's Ctrl-C reaches it: sent to the process from the
    # timer's thread, the kernel may hand it to that thread, and Python 3.11 then raises it in
    # the main thread only when it next takes the GIL, after this function has returned
    main = threading.main_thread().ident
    timer = threading.Timer(rng.uniform(0, 1.5), signal.pthread_kill, (main, signal.SIGINT))
    timer.start()
    try:
        try:
            run_trials([DurabilitySpec()], 10)
        finally:
            timer.cancel()
            timer.join()
        no_op()  # a SIGINT sent just before the join raises here, at the latest
    except KeyboardInterrupt:
        return "ctrl-c here"
    return "ctrl-c here too late"


def no_op() -> None:
    """A Python call: a pending Ctrl-C is raised as it starts."""


def check(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd")) - 1  # less the listing's own


def survivors(tmpdir: str) -> list[str]:
    """Processes started under this soak (their environment holds its TMPDIR), other than
    itself, still alive after a grace period: their pids and command lines."""
    entry = f"TMPDIR={tmpdir}".encode()
    deadline = time.monotonic() + SURVIVOR_GRACE_S
    while True:
        found = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit() or int(proc.name) == os.getpid():
                continue
            try:
                if entry in (proc / "environ").read_bytes().split(b"\0"):
                    cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                    found.append(f"{proc.name}: {cmdline[:120]}")
            except OSError:  # gone meanwhile
                continue
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


if __name__ == "__main__":
    sys.exit(main())
