"""Lesson 8, the first checkpoint (issue #8764) as a distribution: hundreds of trials per mode,
each a real process killed at its first node's first line and a fresh one that recovers.

Runs only inside the trial server, as study 004's trials do: both workers of a trial are
forked spares (`bench/spares.py`), so a trial costs tens of milliseconds, not seconds.
"""

from __future__ import annotations

import signal
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from labkit.bench.failures import Failure, failing_run, failure, first_failure, worker_failure
from labkit.bench.folders import keep_json, new_run_dir
from labkit.bench.launcher import WorkerReport, read_report
from labkit.bench.ledger import read_ledger
from labkit.studies.retries.runs import forked, saved_checkpoints
from labkit.studies.retries.sequential import clear_enough, wilson
from labkit.studies.retries.spec import FirstCheckpointSpec

__all__ = ["first_checkpoint_trials", "one_trial"]

Progress = Callable[[int, int, dict], None]


def saved_word(rows: list[dict]) -> str:
    """What the file held at the kill, in one word: "nothing", "input", "input+loop", ..."""
    return "+".join(row["source"] for row in rows) or "nothing"


def trial_failure(first: WorkerReport, recovery: WorkerReport) -> Failure | None:
    """Why a trial claims nothing, or None: the first worker must die of its own SIGKILL (in
    the node), the recovery must end by itself."""
    if first.timed_out or first.exit_code != -signal.SIGKILL:
        return worker_failure(first) or failure("not_killed_in_node", first.role)
    return first_failure([(recovery, None)])


def one_trial(spec: FirstCheckpointSpec, run_dir: Path) -> dict:
    """Accept a run, crash at its first node, read the file as the crash left it, recover."""
    started = time.perf_counter()
    job = {"mode": spec.mode}
    with failing_run(run_dir):
        entry = "first_checkpoint:accept_and_crash"
        with forked(run_dir, "first", entry, job, spec.timeout) as first:
            first.wait()
        at_kill = saved_checkpoints(run_dir)  # before recovery writes anything
        entry = "first_checkpoint:recover"
        with forked(run_dir, "recovery", entry, job, spec.timeout) as recovery:
            recovery.wait()
        accepted = any(line["phase"] == "accepted" for line in read_ledger(run_dir))
        resumed = read_report(run_dir, "recovery").get("resumed", False)
        return {
            "saved": saved_word(at_kill),
            "accepted": accepted,
            "resumed": resumed,
            "lost": accepted and not resumed,
            "ms": round((time.perf_counter() - started) * 1000, 1),
            "failure": trial_failure(first.report(), recovery.report()),
            "run_dir": str(run_dir),
        }


def first_checkpoint_trials(
    spec: dict, out: str | None = None, progress: Progress | None = None
) -> dict:
    """`spec.trials` trials of one durability mode, one after another, each in its folder; with
    `spec.margin`, only until the lost share is clear enough (`sequential.clear_enough`)."""
    spec = FirstCheckpointSpec(**spec)
    root = new_run_dir(out, prefix=f"first-checkpoint-{spec.mode}-")
    started = time.perf_counter()
    trials, counted = [], []
    for n in range(1, spec.trials + 1):
        trials.append(one_trial(spec, new_run_dir(root / f"trial-{n}")))
        counted += [] if trials[-1]["failure"] else trials[-1:]
        if progress:
            progress(n, spec.trials, trials[-1])
        if clear_enough(sum(t["lost"] for t in counted), len(counted), spec.margin):
            break
    lost = sum(t["lost"] for t in counted)
    result = {
        "mode": spec.mode,
        "trials": len(trials),  # as many as were run: at most spec.trials
        "most": spec.trials,
        "margin": spec.margin,
        "interval": [round(x, 4) for x in wilson(lost, len(counted))],
        "saved": dict(Counter(t["saved"] for t in counted).most_common()),
        "lost": lost,
        "failed": len(trials) - len(counted),
        "seconds": round(time.perf_counter() - started, 2),
        "runs": trials,
        "run_dir": str(root),
    }
    keep_json(root, results={k: v for k, v in result.items() if k != "runs"})
    return result
