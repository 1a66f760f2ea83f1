"""Study 001: `interrupt()` + `Command(resume=...)` runs the interrupted node again from its start.

A run: the graph creates a ticket through the ticket service and pauses at an interrupt; it is
resumed in the same process (the study: InMemorySaver) or, with `cross_process`, in a fresh
process from a SqliteSaver file, optionally after a SIGKILL at a kill point inside the node.
The ledger records every ticket the node got back, so the figures survive any kill.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from labkit.bench import server
from labkit.bench.errors import check_bool, check_choice, described, refusal
from labkit.bench.failures import FAILED, worker_failure
from labkit.bench.folders import keep_json, new_run_dir
from labkit.bench.launcher import WorkerProcess, WorkerReport, read_report
from labkit.bench.ledger import read_ledger
from labkit.bench.snapshot import read_tables
from labkit.bench.tickets import TICKETS_FILE

__all__ = [
    "INTERRUPT_KILL_POINTS",
    "KEY_STRATEGIES",
    "LAYOUTS",
    "InterruptSpec",
    "check_kill_point",
    "run_interrupt",
]

KEY_STRATEGIES = ("fresh", "stable")  # a new UUID per node run, or the operation id of the input
# create + review in one node; prepare → approve → execute; the same, execute committing a
# "filed" mark before it asks for the ticket (graphs.py)
LAYOUTS = ("combined", "split", "mark_first")
INTERRUPT_KILL_POINTS = ("none", "before_create", "after_create", "paused")
KEY_FUNCTION = "def operation_key("  # what a reader's key_source must define


@dataclass(frozen=True)
class InterruptSpec:
    key: str = "fresh"
    layout: str = "combined"
    cross_process: bool = False
    kill_at: str = "none"
    key_source: str | None = None  # a reader's `operation_key(state)` (exercises): key "custom"
    approval: bool = True  # what the person answers at the interrupt: Command(resume=approval)

    def __post_init__(self) -> None:
        check_choice("key strategy", self.key, (*KEY_STRATEGIES, "custom"))
        if (self.key == "custom") != (self.key_source is not None):
            raise refusal("custom_key")
        if self.key_source is not None and (
            not isinstance(self.key_source, str) or KEY_FUNCTION not in self.key_source
        ):
            raise refusal("key_source_form", value=described(self.key_source))
        check_choice("layout", self.layout, LAYOUTS)
        check_bool("cross_process", self.cross_process)
        check_bool("approval", self.approval)
        check_kill_point(self.kill_at, self.cross_process)


def check_kill_point(kill_at: str, cross_process: bool, needs: str = "cross_process=True") -> None:
    """A kill point, and a fresh process to resume in if it kills: `needs` says how the caller
    asks for one (cross_process=True in Python, --cross-process on the command line)."""
    check_choice("kill point", kill_at, INTERRUPT_KILL_POINTS)
    if kill_at != "none" and not cross_process:
        raise refusal("kill_needs_cross_process", needs=needs)


def ticket_rows(run_dir: Path) -> list[list]:
    """The ticket service's rows, read back like every snapshot (read-only, a new connection);
    none if no process got as far as opening the service."""
    path = run_dir / TICKETS_FILE
    return read_tables(path)["ticket"].rows if path.exists() else []


def run_here(spec: dict, out: str | None = None) -> dict:
    """In the trial server: run the spec in forked workers and collect the figures."""
    spec = InterruptSpec(**spec)
    run_dir = new_run_dir(out, prefix="interrupt-")
    job = {
        "key": spec.key,
        "layout": spec.layout,
        "key_source": spec.key_source,
        "approval": spec.approval,
    }

    def worker(role: str, entry: str, **plan: object) -> WorkerProcess:
        return WorkerProcess(
            run_dir,
            role,
            f"labkit.studies.interrupt_resume.graphs:{entry}",
            job,
            start_mode="fork",
            timeout=60,
            **plan,
        )

    workers: dict[str, WorkerReport] = {}
    killed = False
    planned_kill = None if spec.kill_at == "none" else spec.kill_at

    def run(role: str, entry: str) -> str | None:
        """One process; the kill plan applies to the first process that reaches the point.
        Return why it did not do what was planned (an error, a timeout), or None."""
        nonlocal killed
        plan = (spec.kill_at,) if planned_kill and not killed else ()
        with worker(role, entry, pause_at=plan) as process:
            process.finish(kill_at=spec.kill_at if plan else None)
        workers[role] = process.report()
        killed = killed or process.killed_at is not None
        return worker_failure(workers[role], planned_kill)

    if not spec.cross_process:
        failure = run("study", "same_process")
        before = read_report(run_dir, "study").get("before_resume")
    else:
        failure = run("first", "first_process")
        before = len(ticket_rows(run_dir))
        for role in ("resume", "recover"):  # a fresh process each; a killed one needs another
            if failure:
                break
            failure = run(role, "resume_process")
            if workers[role].exit_code == 0:
                break
    reports = {role: read_report(run_dir, role) for role in workers}
    receipts = [ln["ticket_id"] for ln in read_ledger(run_dir) if ln["phase"] == "ticket"]
    tickets = ticket_rows(run_dir)
    # one request, one ticket: none is lost (mark_first, killed between its mark and the ticket)
    count = {0: "lost", 1: "consistent"}.get(len(tickets), "duplicate")
    result = {
        **asdict(spec),
        "node_calls": len(receipts),
        "resumes": sum(report.get("resumes", 0) for report in reports.values()),
        "before_resume": before,
        "after_resume": len(tickets),
        "receipts": receipts,
        "outcome": FAILED if failure else count,
        "failure": failure,
        "exits": {role: report.exit_code for role, report in workers.items()},
        "tickets": tickets,
        "resume": reports.get("resume", {}),
        "recover": reports.get("recover", {}),
        "run_dir": str(run_dir),
    }
    keep_json(run_dir, results=result)
    return result


def run_interrupt(
    key: str = "fresh",
    layout: str = "combined",
    cross_process: bool = False,
    kill_at: str = "none",
    key_source: str | None = None,
    approval: bool = True,
) -> dict:
    """Run study 001's experiment once; the figures as a dict (node_calls, resumes (how many
    times the driver sent Command(resume=...)), before_resume, after_resume, receipts, outcome,
    tickets, and what the resuming process found). `approval=False`: the person rejects."""
    spec = InterruptSpec(key, layout, cross_process, kill_at, key_source, approval)
    return server.call("labkit.studies.interrupt_resume.experiment:run_here", spec=asdict(spec))
