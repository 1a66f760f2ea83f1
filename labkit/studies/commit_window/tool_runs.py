"""Crash a tool step of study 000's closing section (`tool_steps`) and recover, as `runs` does
for the write orders: a first worker dies at the kill point, a fresh one recovers, and for an
unknown outcome a third process reconciles. Everything stays in the run's own folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from labkit.bench.errors import check_choice, check_folder
from labkit.bench.failures import FAILED, failing_run, first_failure
from labkit.bench.folders import holds_run_dirs, keep_json, new_run_dir
from labkit.bench.launcher import WorkerProcess, WorkerReport
from labkit.bench.snapshot import Snapshot, take_snapshot
from labkit.studies.commit_window.orders import NO_KILL
from labkit.studies.commit_window.outcome import state_word
from labkit.studies.commit_window.spec import KILL_MODES
from labkit.studies.commit_window.stores import create_files
from labkit.studies.commit_window.tool_steps import (
    JOBS,
    QUEUE_FILE,
    TOOL_STEPS,
    create_pending_table,
    create_queue,
)

__all__ = ["ToolRun", "run_tool_step", "tool_word"]

ENTRY = "labkit.studies.commit_window.tool_steps:"


@dataclass
class ToolRun:
    """One tool step killed at a point and recovered; `reconciled` only for an unknown outcome."""

    step: str
    kill_at: str
    run_dir: Path
    before: Snapshot
    after: Snapshot
    reconciled: Snapshot | None
    workers: list[WorkerReport]
    outcome: str
    failure: dict | None = None

    def summary(self) -> dict:
        return {
            "step": self.step,
            "kill_at": self.kill_at,
            "before": tool_counts(self.before),
            "after": tool_counts(self.after),
            "reconciled": tool_counts(self.reconciled) if self.reconciled else None,
            "exits": {w.role: w.exit_code for w in self.workers},
            "outcome": self.outcome,
            "failure": self.failure,
            "run_dir": str(self.run_dir),
        }


def tool_counts(snapshot: Snapshot) -> dict:
    """What a tool run's files hold, in the few figures the lessons read."""
    counts = {
        "done": snapshot.done,
        "receipts": [row[2] for row in snapshot.table("receipts").rows],
    }
    files = snapshot.files
    if QUEUE_FILE in files:
        counts["queue"] = [row[1] for row in files[QUEUE_FILE]["jobs"].rows if row[2] is None]
    if "pending" in files["control.db"]:
        counts["pending"] = [row[1] for row in files["control.db"]["pending"].rows]
    return counts


def tool_word(snapshot: Snapshot) -> str:
    """unknown (a pending outcome kept for reconciliation), lost (a job taken from the queue and
    never processed), or study 000's words (duplicate, consistent, ...)."""
    counts = tool_counts(snapshot)
    if "unknown" in counts.get("pending", []):
        return "unknown"
    if QUEUE_FILE in snapshot.files:
        taken = [job for job in JOBS if job not in counts["queue"]]
        if any(job not in counts["receipts"] for job in taken):
            return "lost"
    return state_word(snapshot)


def step_worker(run_dir: Path, role: str, entry: str, step: str, **plan: object) -> WorkerReport:
    """A new worker process, run to its end or to its planned kill (its own exit, or a
    SIGKILL)."""
    job = {"step": step}
    with WorkerProcess(run_dir, role, ENTRY + entry, job, start_mode="served", **plan) as worker:
        worker.finish(kill_at=plan["pause_at"][0] if plan.get("pause_at") else None)
    return worker.report()


@holds_run_dirs
def run_tool_step(
    step: str, kill_at: str = NO_KILL, kill_mode: str = "exit", out: Path | str | None = None
) -> ToolRun:
    """Crash the tool step at `kill_at`, recover in a fresh process (and reconcile an unknown
    outcome in a third), and name what the files hold: run_tool_step("queue_pop", "popped")."""
    tool = TOOL_STEPS[check_choice("tool step", step, TOOL_STEPS)]
    check_choice("kill point", kill_at, (*tool.kill_points, NO_KILL), of=step)
    check_choice("kill mode", kill_mode, KILL_MODES)
    run_dir = new_run_dir(check_folder("out", out), prefix=f"{step}-")
    crash = kill_at != NO_KILL
    plan = {"exit_at": kill_at} if kill_mode == "exit" else {"pause_at": (kill_at,)}
    with failing_run(run_dir):
        queue = QUEUE_FILE in tool.files  # receipts beside progress; else in effect.db
        create_files(run_dir, ("control.db",) if queue else tool.files, unique_key=False)
        (create_queue if queue else create_pending_table)(str(run_dir))
        first = step_worker(run_dir, "first", "run", step, **(plan if crash else {}))
        before = take_snapshot(run_dir, tool.files)
        workers = [first, step_worker(run_dir, "recovery", "run", step)]
        after = take_snapshot(run_dir, tool.files)
        reconciled = None
        if tool_word(after) == "unknown":
            workers.append(step_worker(run_dir, "reconcile", "reconcile", step))
            reconciled = take_snapshot(run_dir, tool.files)
        plans = [(first, kill_at if crash else None), *((w, None) for w in workers[1:])]
        failure = first_failure(plans)
        outcome = FAILED if failure else tool_word(after)
        result = ToolRun(
            step, kill_at, run_dir, before, after, reconciled, workers, outcome, failure
        )
        keep_json(run_dir, results=result.summary())
    return result
