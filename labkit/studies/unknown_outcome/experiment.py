"""A call whose outcome is unknown, for real: the ticket service in its own process, a caller
that calls it once (and may be killed, or time out), a fresh caller that recovers.

A `CallLab` starts the service once and runs any number of trials against it (a sweep's
twenty share one service, each under its own tenant); a fault that kills the service makes
the lab restart it, and every process it started is reaped whatever happens. A trial's
folder holds the caller's `caller.db`, `history.jsonl`, trace and outputs, `results.json`;
the service's folder (`service/`, which only this user may enter) holds `tickets.db`, the
service's trace and its secret, which the lab and its callers send with every request.
"""

from __future__ import annotations

import contextlib
import http.client
import platform
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from labkit.bench.errors import (
    check_choices,
    check_folder,
    check_function,
    check_instance,
    check_number,
)
from labkit.bench.failures import error_fields, failing_run, first_failure, run_failed
from labkit.bench.failures import failure as failed_so
from labkit.bench.folders import holds_run_dirs, keep_json, new_run_dir
from labkit.bench.launcher import WorkerProcess, WorkerReport
from labkit.bench.snapshot import Table, read_tables
from labkit.bench.tickets import TICKETS_FILE
from labkit.bench.trace import read_json_lines, read_trace
from labkit.studies.unknown_outcome.caller import (
    CALLER_FILE,
    HISTORY_FILE,
    SECRET_FILE,
    SECRET_HEADER,
)
from labkit.studies.unknown_outcome.outcome import FAILED, classify, jepsen_ops
from labkit.studies.unknown_outcome.service import HOST, PORT_FILE
from labkit.studies.unknown_outcome.spec import FAULTS, MAX_TIMEOUT, STRATEGIES, CallSpec

__all__ = [
    "KEY",
    "SERVICE_DIR",
    "TITLE",
    "CallLab",
    "CallResult",
    "ServiceProcess",
    "run_call",
    "run_specs",
    "sweep_calls",
]

KEY = "job-17:open-ticket:v1"  # the operation's identity, fixed before the first call
TITLE = "build-3: ENOSPC"  # the OS's code for a full disk: data in no language (issue 27)
SERVICE_DIR = "service"
CALLER_ENTRY = "labkit.studies.unknown_outcome.caller:run_caller"
SERVICE_ENTRY = "labkit.studies.unknown_outcome.service:serve"
WORKER_TIMEOUT = 20.0  # seconds a caller process may take on top of its call's timeout


class ServiceProcess:
    """The ticket service for a run or a sweep: started, restarted after a fault killed it,
    stopped and reaped. Use it as a context manager."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(mode=0o700)  # others may not enter: the service's secret is here
        self.reports: list[WorkerReport] = []  # the services that ended (killed by a fault)
        self.worker: WorkerProcess | None = None
        self.port = 0
        self.secret = ""  # the running service's: every request to it must carry it

    def start(self) -> ServiceProcess:
        """Start a service process and learn its port and secret (it waits at `listening`
        meanwhile)."""
        role = f"service-{len(self.reports) + 1}" if self.reports else "service"
        self.worker = WorkerProcess(
            self.folder,
            role,
            SERVICE_ENTRY,
            {},
            pause_at=("listening",),
            timeout=10**6,
            start_mode="served",
        )
        self.worker.start()
        if self.worker.wait_for_pause() != "listening":
            self.worker.close()
            said = error_fields(self.worker.output_path("stderr").read_text())
            raise run_failed(failed_so("said", role, **said), self.folder, "service_failed")
        self.port = int((self.folder / PORT_FILE).read_text())
        self.secret = (self.folder / SECRET_FILE).read_text()
        self.worker.resume()
        return self

    def died(self, expected: bool) -> bool:
        """Whether the service ended (waiting for it if a fault was to kill it); if it did,
        keep its report and start another, so the next caller finds one."""
        process = self.worker.proc
        if expected:
            with contextlib.suppress(Exception):
                process.wait(timeout=10)
        if process.poll() is None:
            return False
        self.worker.wait()
        self.worker.close()
        self.reports.append(self.worker.report())
        self.start()
        return True

    def quiet(self, tenant: str) -> None:
        """Ask the service to release what a fault held back for `tenant` and finish it."""
        connection = http.client.HTTPConnection(HOST, self.port, timeout=60)
        try:
            connection.request(
                "GET", f"/quiet?tenant={tenant}", headers={SECRET_HEADER: self.secret}
            )
            connection.getresponse().read()
        finally:
            connection.close()

    def tickets(self, tenant: str) -> list[list]:
        """The service's rows for `tenant`, read through a new read-only connection."""
        return self.ticket_table(tenant).rows

    def ticket_table(self, tenant: str) -> Table:
        """The service's ticket table, only the rows of `tenant` (a sweep's trials share it)."""
        path = self.folder / TICKETS_FILE
        tables = read_tables(path) if path.exists() else {}
        if "ticket" not in tables:  # no request has reached the service (or made the table) yet
            return Table(["id", "tenant", "op_key", "payload"], [])
        table = tables["ticket"]
        return Table(table.columns, [row for row in table.rows if row[1] == tenant])

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()

    def __enter__(self) -> ServiceProcess:
        try:
            return self.start()
        except BaseException:  # a Ctrl-C while it starts: `with` would not call __exit__
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class CallResult:
    spec: CallSpec
    run_dir: Path
    service_dir: Path
    tenant: str
    caller: WorkerReport
    recovery: WorkerReport
    service_restarted: bool
    tickets: list[list]  # the service's rows for this trial: id, tenant, op_key, payload
    checkpoint: list[list]  # the caller's intent row: op_key, title, status, ticket
    ops: list[dict]  # the Jepsen history: process, f, key, type, value, error
    outcome: str
    failure: dict | None = None

    @property
    def status(self) -> str | None:
        """What the caller's checkpoint believes: unknown, done or failed."""
        return self.checkpoint[0][2] if self.checkpoint else None

    def summary(self) -> dict:
        return {
            "strategy": self.spec.strategy,
            "fault": self.spec.fault,
            "timeout": self.spec.timeout,
            "jepsen": [op["type"] for op in self.ops],
            "tickets": len(self.tickets),
            "status": self.status,
            "outcome": self.outcome,
            "failure": self.failure,
            "exits": {"caller": self.caller.exit_code, "recovery": self.recovery.exit_code},
            "service_restarted": self.service_restarted,
            "run_dir": str(self.run_dir),
        }

    def to_json(self) -> dict:
        return {
            **self.summary(),
            "spec": {k: str(v) if isinstance(v, Path) else v for k, v in asdict(self.spec).items()},
            "service_dir": str(self.service_dir),
            "ticket_rows": self.tickets,
            "checkpoint": self.checkpoint,
            "ops": self.ops,
            "caller": self.caller.to_json(),
            "recovery": self.recovery.to_json(),
            "versions": {"python": platform.python_version(), "sqlite": sqlite3.sqlite_version},
        }

    def events(self) -> list[dict]:
        """The trial's trace and the service's events of its tenant, in time order."""
        service = [e for e in read_trace(self.service_dir) if e.get("tenant") == self.tenant]
        return sorted(read_trace(self.run_dir) + service, key=lambda e: e["t_ns"])


class CallLab:
    """A running ticket service and the trials made against it."""

    def __init__(self, service_dir: Path) -> None:
        self.service = ServiceProcess(service_dir)

    def caller(self, spec: CallSpec, run_dir: Path, role: str, **plan: object) -> WorkerProcess:
        """A caller worker, a new process: the first call ("caller") or the recovery."""
        job = {
            "port": self.service.port,
            "service_dir": str(self.service.folder),
            "tenant": spec.label,
            "op_key": KEY,
            "title": TITLE,
            "strategy": spec.strategy,
            "fault": spec.fault,
            "timeout": spec.timeout,
            "recover_source": spec.recover_source,
        }
        plan.setdefault("timeout", spec.timeout + WORKER_TIMEOUT)
        return WorkerProcess(run_dir, role, CALLER_ENTRY, job, start_mode="served", **plan)

    def first_caller(self, spec: CallSpec, run_dir: Path, **plan: object) -> WorkerProcess:
        """The first caller, with the fault's kill: it exits right after sending."""
        exit_at = "sent" if spec.fault == "caller_killed" else None
        return self.caller(spec, run_dir, "caller", exit_at=exit_at, **plan)

    def recover(self, spec: CallSpec, run_dir: Path, first: WorkerReport) -> CallResult:
        """After the first caller: restart the service if the fault killed it, recover in a
        fresh caller, wait until the service is quiet, read both sides, classify, save."""
        with failing_run(run_dir):
            restarted = self.service.died(expected=spec.fault == "service_killed")
            with self.caller(spec, run_dir, "recovery") as process:
                process.wait()
            recovery = process.report()
            self.service.quiet(spec.label)
            tickets = self.service.tickets(spec.label)
            caller_db = run_dir / CALLER_FILE
            checkpoint = read_tables(caller_db)["intent"].rows if caller_db.exists() else []
            ops = jepsen_ops(read_json_lines(run_dir / HISTORY_FILE))
            planned = first.killed_at if first.killed_at else None
            failure = first_failure([(first, planned), (recovery, None)])
            if not failure and restarted != (spec.fault == "service_killed"):
                unplanned = "service_died" if restarted else "service_not_killed"
                failure = failed_so(unplanned, "service")
            status = checkpoint[0][2] if checkpoint else None
            first_unknown = bool(ops) and ops[0]["type"] == "info"
            outcome = FAILED if failure else classify(len(tickets), status, first_unknown)
            result = CallResult(
                spec,
                run_dir,
                self.service.folder,
                spec.label,
                first,
                recovery,
                restarted,
                tickets,
                checkpoint,
                ops,
                outcome,
                failure,
            )
            keep_json(run_dir, results=result.to_json())
        return result

    def trial(self, spec: CallSpec, run_dir: Path) -> CallResult:
        """One call, its fault, and its recovery, in `run_dir` (a new folder)."""
        with self.first_caller(spec, run_dir) as process:
            process.wait()
        return self.recover(spec, run_dir, process.report())

    def __enter__(self) -> CallLab:
        self.service.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.service.close()


@holds_run_dirs
def run_call(
    strategy: str = "reconcile",
    fault: str = "reply_lost",
    timeout: float = 0.2,
    out: Path | str | None = None,
    recover_source: str | None = None,
) -> CallResult:
    """One call with `fault`, recovered by `strategy`: run_call("new_key", "reply_lost") →
    duplicate. The service starts for this run and is stopped and reaped after it."""
    spec = CallSpec(strategy, fault, timeout, check_folder("out", out), recover_source)
    run_dir = new_run_dir(spec.out, prefix="unknown-outcome-")
    with failing_run(run_dir), CallLab(run_dir / SERVICE_DIR) as lab:
        return lab.trial(spec, run_dir)


Progress = Callable[[int, int, CallResult], None]


def sweep_specs(strategies: Iterable[str], faults: Iterable[str], timeout: float) -> list[CallSpec]:
    return [CallSpec(s, f, timeout) for s in strategies for f in faults]


@holds_run_dirs
def sweep_calls(
    strategies: Iterable[str] = tuple(STRATEGIES),
    faults: Iterable[str] = tuple(FAULTS),
    timeout: float = 0.2,
    out: Path | str | None = None,
    progress: Progress | None = None,
) -> list[CallResult]:
    """Every strategy under every fault, one after another against one service (a fault
    may kill it); each trial in its own folder named by its label, `new_key.reply_lost`."""
    specs = sweep_specs(
        check_choices("strategy", strategies, STRATEGIES),
        check_choices("fault", faults, FAULTS),
        check_number("timeout", timeout, 0, MAX_TIMEOUT),
    )
    check_function("progress", progress)
    return run_specs(specs, out, progress)


@holds_run_dirs
def run_specs(
    specs: list[CallSpec], out: Path | str | None = None, progress: Progress | None = None
) -> list[CallResult]:
    """Run each spec in turn against one service, each trial in a folder named by its label."""
    longest = max((spec.label for spec in specs), key=len)
    root = new_run_dir(check_folder("out", out), prefix="unknown-outcome-sweep-", deepest=longest)
    results = []
    with failing_run(root), CallLab(root / SERVICE_DIR) as lab:
        for spec in specs:
            trial_dir = root / spec.label
            trial_dir.mkdir()
            results.append(lab.trial(replace(spec, out=trial_dir), trial_dir))
            if progress:
                progress(len(results), len(specs), results[-1])
    return results


def check_result(result: object) -> CallResult:
    return check_instance("result", result, CallResult, "call_result")
