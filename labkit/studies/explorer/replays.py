"""Replay: each crash state made and recovered, LANES workers at a time.

For each point, a worker runs the reader's code to it and dies there (or the recording's
fork died there already: a step's, a "sync" graph's), then fresh workers recover, one per
restart, each on its own copy of what the kill left (with a Postgres server, whose schema a
folder's copy cannot take along, the crash state is made again for each restart), and the
checker judges each.
A point's row is its worst restart's. Every worker is reaped, whatever happens.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from labkit.bench.failures import FAILED, english_line, worker_failure
from labkit.bench.gate import EXIT_CODE
from labkit.bench.launcher import WorkerProcess, WorkerReport, first_to_end, read_report
from labkit.bench.restart import FRESH
from labkit.bench.trace import Trace, read_trace
from labkit.studies.explorer.postgres_runs import RunSchemas
from labkit.studies.explorer.record import point_folder, point_name
from labkit.studies.explorer.report import PointResult, outside_kinds
from labkit.studies.explorer.restart_forks import AFTER, ALSO, copy_crash_state, exit_status
from labkit.studies.explorer.spec import ExploreSpec
from labkit.studies.explorer.with_files import copy_in

__all__ = ["CHECKER_RAISED", "ENTRY", "INTERRUPTED", "exploration_row", "replayed", "run_workers"]

ENTRY = "labkit.studies.explorer.worker:run"
SIGKILLED = -9
CHECKER_RAISED, INTERRUPTED = "checker_raised", "interrupted"  # why an exploration stopped
OUTSIDE = "recovery_outside"  # why a recovery is not judged: it wrote outside its run folder
RUN_OUTSIDE = "run_outside"  # why the run without a crash is not: the same
# ... or it connected to a service over the network, whose state no crash state holds, or
# started a program, whose doing beyond the run folder's files the explorer cannot see
# the kinds whose restarts one worker recovers, forking the others (`restart_forks`): a graph's
# server holds LangGraph, and each worker it forks cost the exploration's process most of its
# time; a step's light server forks cheaply (side by side, a step explored slower grouped)
FORKED_RESTARTS = ("graph", "callable")
NETWORK = {OUTSIDE: "recovery_network", RUN_OUTSIDE: "run_network"}
PROGRAMS = {OUTSIDE: "recovery_program", RUN_OUTSIDE: "run_program"}
WROTE_OUTSIDE = {OUTSIDE: "the recovery", RUN_OUTSIDE: "the run without a crash"}
SHOWN_LAST = {"not_judged": 1, "consistent": 2}  # a row's outcomes the matrix shows last
LANES = 4  # crash states explored side by side: two per core of a workshop laptop, so that
# one worker runs while the trial server forks the next (a fork holds the server a few ms)


def exploration_row(point: dict, spec: ExploreSpec, run_dir: Path | None) -> PointResult:
    return PointResult(
        point["n"],
        point["op"],
        point["detail"],
        point["where"],
        FAILED,
        None,
        str(run_dir) if run_dir else None,
        spec.kill_mode,
        said=point.get("said"),
    )


def replayed(
    folder: Path,
    spec: ExploreSpec,
    points: list[dict],
    truth: tuple[dict, list[str], list[str]],
    schemas: RunSchemas,
) -> Iterator:
    """Each point's row once its crash state is explored: a worker runs to the point and dies
    there, then fresh ones recover (one per restart, each on its own copy of what the kill
    left: one worker started for them all, `restart_forks`) and the checker judges each. With
    a Postgres server, whose schema a folder's copy cannot take along, a worker runs to the
    point for each restart instead. LANES workers go at once, recoveries first; all are
    reaped whatever happens."""
    per_restart = spec.restarts if schemas.url else (None,)
    waiting = [(point, restart) for point in points for restart in per_restart]
    ready: list[tuple] = []  # recoveries whose crash state is made: (row, job, other rows)
    running: dict[WorkerProcess, tuple[PointResult, dict, list[PointResult]]] = {}
    judging: dict[int, list[PointResult]] = {}  # a point's recoveries still being judged
    with contextlib.ExitStack() as stack:

        def start(role: str, row: PointResult, job: dict, others: tuple = ()) -> None:
            mode = "fresh" if role == "recovery" and job.get("restart") == FRESH else "fork"
            worker = WorkerProcess(
                Path(row.run_dir), role, ENTRY, job, timeout=spec.timeout, start_mode=mode
            )
            running[stack.enter_context(worker)] = (row, job, list(others))

        def recover(row: PointResult, job: dict) -> None:
            judging.setdefault(row.n, [])
            if "restart" in job:
                ready.append((row, job, []))
            elif spec.kind in FORKED_RESTARTS:
                ready.extend(together(recoveries(row, job, spec.restarts)))
            else:  # a step's light server forks a worker cheaply: one a restart, as measured
                apart = recoveries(row, job, spec.restarts, copy_all=True)
                ready.extend((mine, its_job, []) for mine, its_job in apart)

        def judged_all(row: PointResult) -> PointResult | None:
            """The point's row, once its every restart is judged."""
            judging.setdefault(row.n, []).append(row)
            if len(judging[row.n]) == len(spec.restarts):
                return worst(judging.pop(row.n), spec.restarts)
            return None

        while waiting or running or ready:
            while (waiting or ready) and len(running) < LANES:
                if ready:
                    start("recovery", *ready.pop(0))
                    continue
                point, restart = waiting.pop(0)
                row, job = prepared(folder, spec, point, truth, schemas.job_fields, restart)
                if point["forked"] is None:
                    start("first", row, job)
                elif died_as_planned(row, point["forked"]["code"], spec):
                    recover(row, job)  # the recording's fork was killed there
                else:
                    yield row
            if not running:
                continue
            worker = first_to_end(list(running))
            row, job, others = running.pop(worker)
            ended = worker.report()
            worker.close()
            row.left += ended.left
            if worker.role == "first":
                if died_as_planned(row, ended.exit_code, spec, ended):
                    noted_kill(row, spec)
                    recover(row, killed_under(job, worker))
                elif "restart" not in job:
                    yield row
                elif done := judged_all(row):  # one restart's crash state was not made
                    yield done
                continue
            for mine, its in [(row, ended), *((r, child_ended(r, ended)) for r in others)]:
                if its.exit_code != 0 or its.timed_out:
                    said = worker_failure(its)
                    failed(mine, english_line(said), "worker", said=said)
                else:
                    report = read_report(Path(mine.run_dir), "recovery")
                    outside = schemas.outside(mine.run_dir)
                    report["outside"] = [*report.get("outside", ()), *outside]
                    judged(mine, report)
                if done := judged_all(mine):
                    yield done


def together(made: list[tuple[PointResult, dict]]) -> list[tuple]:
    """A crash state's recoveries as the workers to start: one for every restart that a fork
    makes (the first's job names the others': `restart_forks.ALSO`), one for each restart
    that needs a new interpreter; each as (row, job, the rows of the others it recovers)."""
    forked = [(row, job) for row, job in made if job["restart"] != FRESH]
    apart = [(row, job, []) for row, job in made if job["restart"] == FRESH]
    if not forked:
        return apart
    (row, job), others = forked[0], forked[1:]
    also = [{"restart": other.restart, "run_dir": other.run_dir} for other, _ in others]
    return [(row, {**job, ALSO: also}, [other for other, _ in others]), *apart]


def child_ended(row: PointResult, worker: WorkerReport) -> WorkerReport:
    """How the child that recovered `row`'s restart ended (`restart_forks`): as its worker,
    with the exit status it kept (none kept: not a success, whatever the worker's), and the
    child's own stderr."""
    code = exit_status(row.run_dir)
    try:
        stderr = Path(row.run_dir, "recovery.stderr").read_text()
    except OSError:
        stderr = ""
    if code is None:
        code = worker.exit_code or None
    return dataclasses.replace(worker, exit_code=code, stderr=stderr, left=[])


def killed_under(job: dict, worker: WorkerProcess) -> dict:
    """The job of the point's recoveries: the process killed there ran under a parent of its
    own, `worker` (`new_parent`), so each recovery, forked from the server, has another
    parent and pid already and moves its clocks alone, without a fork of its own (a fork of
    a process that holds LangGraph costs tens of ms on a loaded machine: once a crash state,
    not once a restart)."""
    return {**job, "killed_parent": worker.proc.pid, "own_parent": False}


def recoveries(
    row: PointResult, job: dict, restarts: tuple[str, ...], copy_all: bool = False
) -> list[tuple]:
    """A row and a job per restart: the first recovers in the point's own folder, each other
    in a copy of it (`after-<restart>` in it) made before any recovery has changed it: here,
    now, for a restart in a new interpreter (a worker of its own, which may start first), by
    the first's own worker for the others (`restart_forks`), unless `copy_all`."""
    made = []
    for restart in restarts:
        if made:  # a copy: what the killed worker left goes with the first only
            copy = os.path.join(row.run_dir, f"{AFTER}{restart}")
            if restart == FRESH or copy_all:
                copy_crash_state(row.run_dir, copy)
            mine = dataclasses.replace(row, run_dir=copy, left=[])
        else:
            mine = dataclasses.replace(row)
        mine.restart = restart
        made.append((mine, {**job, "restart": restart}))
    return made


def worst(rows: list[PointResult], restarts: tuple[str, ...]) -> PointResult:
    """A point's row: the first restart (in `restarts`' order) whose recovery is `shown_first`;
    what each recovery's code left, ended, goes with it."""
    rows.sort(key=lambda row: restarts.index(row.restart))
    shown = shown_first(rows)
    shown.left = [process for row in rows for process in row.left]
    return shown


def shown_first(rows: list[PointResult]) -> PointResult:
    """Which of one crash state's rows the matrix shows: the first that says what is wrong (or
    why no outcome is claimed), else the first not judged (a verdict beats none), else the
    first."""
    return min(rows, key=lambda row: SHOWN_LAST.get(row.outcome, 0))


def prepared(
    folder: Path,
    spec: ExploreSpec,
    point: dict,
    truth: tuple[dict, list[str], list[str]],
    job_fields: Callable[[Path], dict],
    restart: str | None = None,
) -> tuple:
    """A point's row (its run folder made, unless the recording's fork left it) and the job
    that crashes there, its recoveries judged by `truth` (the run without a crash at its end,
    its temporaries, and the files it keeps as no effect: `services.bookkeeping`); given a
    `restart`, the crash state is made for that restart alone, in the point's folder for the
    first, in a folder `after-<restart>` in it for another."""
    run_dir = Path(point_folder(str(folder), point["n"]))
    if restart not in (None, spec.restarts[0]):
        run_dir = run_dir / f"{AFTER}{restart}"
    row = exploration_row(point, spec, run_dir)
    row.restart = restart
    if point["forked"] is None:
        run_dir.mkdir(parents=True, exist_ok=restart is not None)
        copy_in(run_dir, spec.with_files)
    plan = {k: point[k] for k in ("op", "detail", "nth")}
    killed_parent = point["forked"] and point["forked"]["parent"]  # the recording's parent
    point = {k: point[k] for k in ("n", "op", "detail", "nth", "where")}
    job = spec.replay_job(*truth, crash_at=plan, point=point, killed_parent=killed_parent)
    job["code_cache"] = str(folder)  # the reader's module compiled once: `code_cache`
    job["own_parent"] = not killed_parent  # a worker that runs to the point: `killed_under`
    return row, {**job, **job_fields(run_dir), **({"restart": restart} if restart else {})}


def died_as_planned(
    row: PointResult, code: int | None, spec: ExploreSpec, first: WorkerReport | None = None
) -> bool:
    """Whether the process killed at the row's point died as planned (its exit status
    `code`); if not, the row says why."""
    if code != (EXIT_CODE if spec.kill_mode == "exit" else SIGKILLED):
        not_killed = f"it did not die after {row.op} {row.detail}:"
        said = worker_failure(first) if first else None
        if first is None:
            failed(row, f"{not_killed} it exited {code}", "not_killed_exited", exit_code=code)
        elif said:
            failed(row, f"{not_killed} {english_line(said)}", "not_killed_worker", said=said)
        else:
            failed(row, f"{not_killed} it ran to its end this time", "not_killed_ran")
        return False
    return True


def failed(row: PointResult, line: str, code: str, **fields: object) -> None:
    """Why no outcome is claimed for the row: a line (the results' `failure`) and its code
    with fields (`failed`: explorer.toml's [failed] says it). The bench's own lines (`said`,
    `failures.worker_failure`) are quoted as they are."""
    row.failure, row.failed = line, {"code": code, **fields}


def noted_kill(row: PointResult, spec: ExploreSpec) -> None:
    """For the timeline: a worker that ran to its point had no time to say so itself; it
    died just after its last word."""
    last = read_trace(row.run_dir)[-1]["t_ns"]
    trace = Trace(row.run_dir, "first")
    point = {"n": row.n, "op": row.op, "detail": row.detail, "where": row.where}
    trace.note("point", point=str(row.n), t_ns=last, **point)
    trace.note("kill", point=point_name(row.n), mode=spec.kill_mode, t_ns=last)
    trace.close()


def run_workers(
    dirs: dict, role: str, jobs: dict, spec: ExploreSpec, mode: str = "fork"
) -> dict[object, WorkerReport]:
    """One worker per run folder (`dirs`, each with its job), side by side, forked from the
    trial server (or `fresh`: step mode's, started in the kernel); each reaped whatever
    happens."""
    with contextlib.ExitStack() as stack:
        workers = {
            n: stack.enter_context(
                WorkerProcess(
                    Path(run_dir), role, ENTRY, jobs[n], timeout=spec.timeout, start_mode=mode
                )
            )
            for n, run_dir in dirs.items()
        }
        for worker in workers.values():
            worker.wait()
        return {n: worker.report() for n, worker in workers.items()}


def judged(row: PointResult, report: dict, outside: str = OUTSIDE) -> None:
    """The checker's word on a row (the default checker's as a code too), or why there is none
    (the checker raised, or the run wrote outside the run folder, connected to a service or
    started a program: `outside` says which run)."""
    if report.get("outside"):
        files = tuple(report["outside"])  # paths, as detected: the views join them
        _, services, programs = map(tuple, outside_kinds(files))
        row.outcome = FAILED
        if services:  # the stronger reason: a remote state it cannot see, let alone judge
            line = f"{WROTE_OUTSIDE[outside]} connected to {', '.join(services)}"
            failed(row, line, NETWORK[outside], files=files, services=services)
            return
        if programs:  # what it did beyond the run folder's files is unseen, let alone judged
            line = f"{WROTE_OUTSIDE[outside]} started {', '.join(programs)}"
            failed(row, line, PROGRAMS[outside], files=files, programs=programs)
            return
        line = f"{WROTE_OUTSIDE[outside]} wrote outside its run folder: {', '.join(files)}"
        failed(row, line, outside, files=files)
        return
    if "checker_error" in report:
        error = report["checker_error"]
        row.outcome = FAILED
        failed(row, f"the checker raised {error}", CHECKER_RAISED, error=error)
        return
    row.outcome, row.complaint = report["outcome"], report["complaint"]
    row.finding = report.get("finding")
