"""The crash explorer: run the reader's code once, then crash it at every crash point it passed.

Record: a worker runs the code without a crash and numbers every crash point (`record.py`),
with the state of the files at each. Replay: for each distinct crash state, a process that ran
the code to its first point is killed there, and a fresh worker recovers and lets the checker
judge (`worker.py`); points whose crash states are equal are explored once and counted. For a
step, that process is a fork the recording makes at the point (so no step runs twice to get
there); for a graph, whose saves run in threads a fork would not take along, it is a worker
that runs the graph again to the point. Report: a row per point (`report.py`), written to the
exploration's folder as it goes, so a Ctrl-C or a checker that raises still leaves, and
returns, what was explored.

A server of the bench runs the whole exploration (`explore_in`) and reports each row as it
goes: the trial server for a graph, the light one (no LangGraph: its forks are cheaper still)
for a step. Its workers are its forks, which start in milliseconds where a fresh interpreter
takes tens, and the kernel and the CLI never import the reader's code.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from labkit.bench import server
from labkit.bench.errors import (
    MAX_TIMEOUT,
    LabError,
    RunFailed,
    check_choice,
    check_choices,
    check_folder,
    check_function,
    check_number,
)
from labkit.bench.failures import FAILED, worker_failure
from labkit.bench.folders import keep_json, new_run_dir, release_run_dir
from labkit.bench.gate import EXIT_CODE
from labkit.bench.launcher import WorkerProcess, WorkerReport, first_to_end, read_report
from labkit.bench.preload import preload
from labkit.bench.restart import FRESH, RESTARTS
from labkit.bench.trace import Trace, read_trace
from labkit.studies.explorer.postgres_runs import RunSchemas
from labkit.studies.explorer.record import KILL_MODES, point_folder, point_name, unreadable
from labkit.studies.explorer.report import (
    EXPLORED_FILE,
    Exploration,
    PointResult,
    read_explored,
    replays_twice,
)
from labkit.studies.explorer.steps import FILES
from labkit.studies.explorer.target import KINDS, name_target, on_import_path

__all__ = ["DURABILITY_MODES", "ExploreSpec", "explore", "explore_in", "explore_spec"]

ENTRY = "labkit.studies.explorer.worker:run"
DURABILITY_MODES = ("sync", "async", "exit")
SIGKILLED = -9
CHECKER_RAISED, INTERRUPTED = "checker_raised", "interrupted"  # why an exploration stopped
OUTSIDE = "recovery_outside"  # why a recovery is not judged: it wrote outside its run folder
# Why writes went unwatched (the commit watch could not crash them apart: bench.commit_watch,
# or the recording could not read them); the words are explorer.toml's [unwatched]
UNWATCHED = ("wal", "uncounted", "together", "unreadable", "no_point")
SERVERS = {"step": "light", "graph": "trial", "callable": "trial"}  # a step's need no LangGraph
# Each crash state is recovered after every restart the spec names (`bench.restart`), each on a
# copy of what the kill left; a graph's new hash seed costs an interpreter that imports
# LangGraph (about 1.5 s a state), so only a step's exploration takes it unless asked.
RESTARTS_BY_KIND = {"step": RESTARTS, "graph": RESTARTS[:-1], "callable": RESTARTS[:-1]}
FORKED = ("step",)  # the kinds whose recording forks a process to kill at each crash state
AGAIN = "again"  # the folder of a second replay of every crash state (`replays_twice`)
AFTER = "after-"  # a copy of a crash state, for the recovery after one more restart
LANES = 4  # crash states explored side by side: two per core of a workshop laptop, so that
# one worker runs while the trial server forks the next (a fork holds the server a few ms)
Progress = Callable[[int, int, PointResult], None]


@dataclass(frozen=True)
class ExploreSpec:
    """What to explore and how; every value checked here, in one line, before anything runs."""

    target: dict  # name_target's answer: the reader's module (or file, or source) and name
    kind: str = "step"
    checker: dict | None = None  # the same for a checker; None: the default checker
    durability: str = "sync"  # a graph's
    files: str = "two"  # a step's: control.db and effect.db, or "one" file for both
    kill_mode: str = "sigkill"
    timeout: float = 30.0  # per worker
    restarts: tuple[str, ...] | None = None  # when recoveries come (None: the kind's own)
    resume: object = None  # a graph's answer to every interrupt (None: True), JSON
    resume_by: dict | None = None  # or a function of the interrupt's payload (name_target's)
    resumes: list | None = None  # or answers in order: the n-th interrupt gets the n-th, JSON
    config: dict | None = None  # a graph's config for invoke (its configurable values), JSON
    postgres: str | None = None  # a server for the nodes' rows ("lab": labkit's own), a URL

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, KINDS)
        check_choice("durability mode", self.durability, DURABILITY_MODES)
        check_choice("files", self.files, tuple(FILES))
        check_choice("kill mode", self.kill_mode, KILL_MODES)
        object.__setattr__(self, "timeout", check_number("timeout", self.timeout, 0, MAX_TIMEOUT))
        restarts = RESTARTS_BY_KIND[self.kind] if self.restarts is None else self.restarts
        object.__setattr__(self, "restarts", check_restarts(restarts))
        if isinstance(self.resumes, tuple):
            object.__setattr__(self, "resumes", list(self.resumes))
        check_resume(self.resume, self.resume_by, self.resumes)
        check_config(self.config)
        check_postgres(self.postgres, self.kind)

    def job(self, **fields: object) -> dict:
        return {**asdict(self), **fields}


def check_restarts(restarts: object) -> tuple[str, ...]:
    """The restarts to recover after, in `RESTARTS`' order: a list of their names, or one text
    of them with commas between ("now,month"), as `--restart-at` takes them."""
    if isinstance(restarts, str):
        restarts = [name.strip() for name in restarts.split(",")]
    picked = set(check_choices("restart", restarts, RESTARTS))
    return tuple(name for name in RESTARTS if name in picked)


def check_resume(resume: object, resume_by: dict | None, resumes: object = None) -> None:
    """One way to answer interrupts, and values that can travel to the workers (JSON)."""
    if sum(way is not None for way in (resume, resume_by, resumes)) > 1:
        raise LabError(
            "give one of resume (a value), resume_by (a function) or resumes (answers in "
            "order), not two"
        )
    if resumes is not None and (not isinstance(resumes, list) or not resumes):
        raise LabError(
            "resumes must be a list of answers in order, one per interrupt the run meets, "
            f"such as [{{'action': 'approve'}}, 'ana@example.com']; not {resumes!r}"
        )
    for name, given in (("resume", resume), *(("an answer of resumes", a) for a in resumes or ())):
        try:
            json.dumps(given)
        except (TypeError, ValueError):
            raise LabError(
                f"{name} must be a JSON value (a dict, list, str, number, True, False), "
                f"not {type(given).__name__}; to answer by the payload, name a function: "
                "resume_by='module:function'"
            ) from None


def check_postgres(postgres: object, kind: str) -> None:
    """A server for a graph's or a callable's rows: "lab" (labkit's own) or a URL."""
    if postgres is None:
        return
    if kind == "step":
        raise LabError("postgres is for a graph or a callable; a step keeps its files")
    if postgres != "lab" and not str(postgres).startswith(("postgresql://", "postgres://")):
        from labkit.bench.postgres import redacted  # a password in it is not repeated

        raise LabError(
            f"postgres must be 'lab' (labkit's own server) or a URL that starts with "
            f"postgresql://, not {redacted(str(postgres))!r}"
        )


def check_config(config: object) -> None:
    """A graph's config: None, or a JSON dict whose `configurable`, if given, is a dict."""
    if config is None:
        return
    if not isinstance(config, dict) or not isinstance(config.get("configurable", {}), dict):
        raise LabError(
            "config must be a dict such as {'configurable': {'passenger_id': '3442 587242'}}, "
            f"not {config!r}"
        )
    try:
        json.dumps(config)
    except (TypeError, ValueError):
        raise LabError(f"config must hold JSON values only, not {config!r}") from None


def explore(
    target: str,
    kind: str = "step",
    checker: str | None = None,
    durability: str = "sync",
    one_file: bool = False,
    kill_mode: str = "sigkill",
    out: Path | str | None = None,
    progress: Progress | None = None,
    restart_at: object = None,
    resume: object = None,
    resume_by: str | None = None,
    resumes: list | None = None,
    config: dict | None = None,
    timeout: float = 30.0,
    path: Path | str | None = None,
    postgres: str | None = None,
) -> Exploration:
    """Crash `target` ('module:callable') at every crash point it passes and check each state,
    recovered after each restart `restart_at` names (default: the kind's own, RESTARTS_BY_KIND).
    A graph's interrupts are answered `resume` (a JSON value; True by default), or, given a
    'module:function', what it returns of each interrupt's payload (`resume_by`), or the
    answers of the list `resumes` in turn (the n-th interrupt the run meets, the n-th); `config`
    is given to its every invoke (e.g. {"configurable": {"user_id": "u1"}}). `timeout` is
    each worker's, in seconds. `path`, a folder, goes first on the workers' import path (for
    a module that imports its siblings); none by default. `postgres`, "lab" or a server's
    URL, gives every run a schema of its own there for the nodes' rows, whose commits are crash
    points (`postgres_runs`); without it, a write to Postgres fails the exploration.

    A Ctrl-C, or a checker that raises, ends the exploration early: what was explored comes
    back all the same, with `stopped` saying why."""
    if not isinstance(one_file, bool):
        raise LabError(f"one_file must be True or False, not {one_file!r}")
    spec = ExploreSpec(
        on_import_path(name_target(target), path),
        kind,
        None if checker is None else name_target(checker, "checker"),
        durability,
        "one" if one_file else "two",
        kill_mode,
        timeout,
        restarts=restart_at,
        resume=resume,
        resume_by=None if resume_by is None else name_target(resume_by, "resume function"),
        resumes=resumes,
        config=config,
        postgres=postgres,
    )
    check_function("progress", progress)
    folder = new_run_dir(check_folder("out", out), "explore-", deepest="point-000/recovery.stdout")
    try:
        return explore_spec(spec, folder, progress)
    finally:
        release_run_dir(folder)


def explore_spec(spec: ExploreSpec, folder: Path, progress: Progress | None = None) -> Exploration:
    """Explore in the server for its kind, into `folder` (made already); a Ctrl-C stops it."""
    relay = (
        (lambda done, total, row: progress(done, total, PointResult(**row))) if progress else None
    )
    try:
        found = server.call_on(
            SERVERS[spec.kind],
            "labkit.studies.explorer.replay:explore_in",
            relay,
            folder=str(folder),
            spec=asdict(spec),
        )
    except KeyboardInterrupt:
        return stopped_early(folder, spec)
    return Exploration.from_json(found)


def stopped_early(folder: Path, spec: ExploreSpec) -> Exploration:
    """What an interrupted exploration had explored, from the rows it wrote as it went."""
    rows = read_explored(folder)
    explored = sum(row.n is not None and row.same_as is None for row in rows)
    found = Exploration(
        spec.target["label"],
        spec.kind,
        str(folder),
        rows,
        stopped=f"interrupted (Ctrl-C) after {explored} crash states",
        stopped_by={"code": INTERRUPTED, "explored": explored},
        spec=asdict(spec),
    )
    keep_json(folder, results=found.to_json())
    return found


def explore_in(folder: str, spec: dict, progress: Progress | None = None) -> dict:
    """The exploration itself, in this process, in a folder made for it: record, then replay
    each distinct crash state (LANES at a time); every row goes to `explored.jsonl` as soon
    as it is known, and the matrix lists them by crash point."""
    spec = ExploreSpec(**spec)
    with RunSchemas(spec.postgres) as schemas:
        return explored(Path(folder), spec, schemas, progress)


def explored(
    folder: Path, spec: ExploreSpec, schemas: RunSchemas, progress: Progress | None
) -> dict:
    """`explore_in`'s work, with the runs' schemas on a Postgres server, if it has one."""
    started = time.monotonic()
    exploration = Exploration(spec.target["label"], spec.kind, str(folder), spec=asdict(spec))
    record = recording(folder, spec, schemas)
    preload(record.get("imported", ()))  # the replays' workers start with the reader's imports
    exploration.clean, exploration.unwatched = record["state"], record["unwatched"]
    exploration.outside = record["outside"]
    clean_row = PointResult(None, "run", "to its end", None, "", None, record["run_dir"])
    clean_row.left = record["left"]
    judged(clean_row, record)
    firsts: dict[object, dict] = {}  # crash state -> the first point that leaves it
    for point in record["points"]:
        # A step's state at a point is what the recording read there. A graph's is not: its
        # saving thread runs beside the nodes, so a replay killed at that point may die with
        # more or less saved (under load, a node's ledger line before its writes are saved);
        # the recording reads no state for it, and every point is its own.
        state = point.pop("state", None)
        first = firsts.setdefault(state if spec.kind in FORKED else point["n"], point)
        point["same_as"] = None if first is point else first["n"]
        point["forked"] = record["forked"].get(point["n"])  # how its fork died, if it forked
    exploration.crash_points, exploration.crash_states = len(record["points"]), len(firsts)
    passes = [Path(folder), *([Path(folder) / AGAIN] if replays_twice(asdict(spec)) else [])]
    total = len(firsts) * len(passes)
    keep_row(folder, clean_row)
    if progress:
        progress(0, total, clean_row)
    if is_checker_error(clean_row):
        exploration.stopped, exploration.stopped_by = clean_row.failure, clean_row.failed
    # A write outside the run folder: each replay would make it again, where no crash is seen
    to_explore = [] if exploration.stopped or exploration.outside else list(firsts.values())
    replays: list[dict[int, PointResult]] = []
    for base in passes:
        if exploration.stopped:
            break
        base.mkdir(exist_ok=True)
        replays.append({})
        with contextlib.closing(replayed(base, spec, to_explore, record["state"], schemas)) as done:
            for row in done:
                replays[-1][row.n] = row
                if len(replays) == 1:  # the first replay's rows are the matrix's
                    keep_row(folder, row)
                if progress:
                    progress(sum(map(len, replays)), total, row)
                if is_checker_error(row):
                    exploration.stopped, exploration.stopped_by = row.failure, row.failed
                    break  # closing it kills and reaps the workers still running
    first = replays[0] if replays else {}  # none: the run without a crash stopped it
    rows = [clean_row, *(compared(row, replays[1:]) for row in first.values())]
    by_n = {row.n: row for row in rows}
    rows += [
        same_state(point, spec, by_n[point["same_as"]])
        for point in record["points"]
        if point["same_as"] is not None and point["same_as"] in by_n
    ]
    exploration.points = sorted(rows, key=lambda row: -1 if row.n is None else row.n)
    exploration.outside += sorted(
        {
            file
            for row in rows
            if row.failed and row.failed["code"] == OUTSIDE
            for file in row.failed["files"].split(", ")
        }
        - set(exploration.outside)
    )
    exploration.seconds = round(time.monotonic() - started, 3)
    keep_json(Path(folder), results=exploration.to_json())
    return exploration.to_json()


def compared(row: PointResult, again: list[dict[int, PointResult]]) -> PointResult:
    """A crash state's row, beside its second replay's: where the two outcomes differ, the
    failing one is shown, marked `varies` (asserting that row in CI would be flaky)."""
    other = again[0].get(row.n) if again else None
    if other is None or other.outcome == row.outcome:
        return row
    shown = row if row.outcome != "consistent" else other
    shown.varies = True
    return shown


def is_checker_error(row: PointResult) -> bool:
    return bool(row.failed) and row.failed["code"] == CHECKER_RAISED


def keep_row(folder: str, row: PointResult) -> None:
    """One more row of the matrix, to the folder as soon as it is known: it survives a Ctrl-C."""
    with open(os.path.join(folder, EXPLORED_FILE), "a") as explored:
        explored.write(json.dumps(row.to_json()) + "\n")


def recording(folder: Path, spec: ExploreSpec, schemas: RunSchemas) -> dict:
    """Run the code once without a crash; its crash points (in order) and its end state."""
    run_dir = folder / "record"
    run_dir.mkdir()
    job = spec.job(point=None, clean=None, fork_to=str(folder) if spec.kind in FORKED else None)
    job.update(schemas.job_fields(run_dir))
    ended = run_workers({0: run_dir}, "record", {0: job}, spec)[0]
    report = read_report(run_dir, "record")
    if "bad_target" in report:  # a name that names no code of its kind: checked by loading it
        raise LabError(report["bad_target"])
    if ended.exit_code != 0 or ended.timed_out:
        why = worker_failure(ended) or f"it exited {ended.exit_code}"
        raise RunFailed(f"your code failed in the run without a crash: {why}; see {run_dir}")
    trace = read_trace(run_dir)
    points = [
        {k: e[k] for k in ("n", "op", "detail", "nth", "where", "said", "state") if k in e}
        for e in trace
        if e["event"] == "point" and e["role"] == "record"  # not a service's of the run's
    ]
    unwatched = [
        unwatched_entry(e.get("reason", "together"), e["files"], e.get("commits"))
        for e in trace
        if e["event"] == "unwatched"
    ]
    if unreadable(report["state"]):
        unwatched.append(unwatched_entry("unreadable", unreadable(report["state"])))
    forked = {e["n"]: e for e in trace if e["event"] == "forked"}
    outside = [e["file"] for e in trace if e["event"] == "outside"]
    return {
        **report,
        "points": points,
        "run_dir": str(run_dir),
        "unwatched": unwatched,
        "outside": outside,
        "forked": forked,
        "left": ended.left,
    }


def unwatched_entry(reason: str, files: list[str], commits: int | None = None) -> dict:
    """Writes the explorer could not crash apart: why (a code of UNWATCHED), which files."""
    return {
        "reason": check_choice("unwatched reason", reason, UNWATCHED),
        "files": files,
        "commits": commits,
    }


def same_state(point: dict, spec: ExploreSpec, explored: PointResult) -> PointResult:
    """A point whose crash state an earlier point left already: counted, not run again."""
    row = exploration_row(point, spec, None)
    row.outcome, row.complaint, row.run_dir = explored.outcome, explored.complaint, explored.run_dir
    row.same_as, row.failure, row.restart = explored.n, explored.failure, explored.restart
    row.failed = explored.failed
    row.finding = explored.finding
    return row


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
    folder: Path, spec: ExploreSpec, points: list[dict], clean: dict, schemas: RunSchemas
) -> Iterator:
    """Each point's row once its crash state is explored: a worker runs to the point and dies
    there, then fresh ones recover (one per restart, each on its own copy of what the kill
    left) and the checker judges each. With a Postgres server, whose schema a folder's copy
    cannot take along, a worker runs to the point for each restart instead. LANES workers go
    at once, recoveries first; all are reaped whatever happens."""
    per_restart = spec.restarts if schemas.url else (None,)
    waiting = [(point, restart) for point in points for restart in per_restart]
    ready: list[tuple[PointResult, dict]] = []  # recoveries whose crash state is made
    running: dict[WorkerProcess, tuple[PointResult, dict]] = {}
    judging: dict[int, list[PointResult]] = {}  # a point's recoveries still being judged
    with contextlib.ExitStack() as stack:

        def start(role: str, row: PointResult, job: dict) -> None:
            mode = "fresh" if role == "recovery" and job.get("restart") == FRESH else "fork"
            worker = WorkerProcess(
                Path(row.run_dir), role, ENTRY, job, timeout=spec.timeout, start_mode=mode
            )
            running[stack.enter_context(worker)] = (row, job)

        def recover(row: PointResult, job: dict) -> None:
            judging.setdefault(row.n, [])
            ready.extend([(row, job)] if "restart" in job else recoveries(row, job, spec.restarts))

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
                row, job = prepared(folder, spec, point, clean, schemas.job_fields, restart)
                if point["forked"] is None:
                    start("first", row, job)
                elif died_as_planned(row, point["forked"]["code"], spec):
                    recover(row, job)  # the recording's fork was killed there
                else:
                    yield row
            if not running:
                continue
            worker = first_to_end(list(running))
            row, job = running.pop(worker)
            ended = worker.report()
            worker.close()
            row.left += ended.left
            if worker.role == "first":
                if died_as_planned(row, ended.exit_code, spec, ended):
                    noted_kill(row, spec)
                    recover(row, job)
                elif "restart" not in job:
                    yield row
                elif done := judged_all(row):  # one restart's crash state was not made
                    yield done
                continue
            if ended.exit_code != 0 or ended.timed_out:
                failed(row, worker_failure(ended), "worker")
            else:
                judged(row, read_report(Path(row.run_dir), "recovery"))
            if done := judged_all(row):
                yield done


def recoveries(row: PointResult, job: dict, restarts: tuple[str, ...]) -> list[tuple]:
    """A row and a job per restart: the first recovers in the point's own folder, each other
    in a copy of it made now, before any recovery has changed it."""
    made = []
    for restart in restarts:
        if made:  # a copy: what the killed worker left goes with the first only
            mine = dataclasses.replace(row, run_dir=copied(row.run_dir, restart), left=[])
        else:
            mine = dataclasses.replace(row)
        mine.restart = restart
        made.append((mine, {**job, "restart": restart}))
    return made


def copied(run_dir: str, restart: str) -> str:
    """What the kill left in `run_dir`, copied into its folder `after-<restart>`."""
    copy = os.path.join(run_dir, f"{AFTER}{restart}")
    shutil.copytree(
        run_dir, copy, ignore=lambda _, names: [n for n in names if n.startswith(AFTER)]
    )
    return copy


def worst(rows: list[PointResult], restarts: tuple[str, ...]) -> PointResult:
    """A point's row: the first restart (in `restarts`' order) whose recovery is not
    consistent, else the first's; what each recovery's code left, ended, goes with it."""
    rows.sort(key=lambda row: restarts.index(row.restart))
    shown = next((row for row in rows if row.outcome != "consistent"), rows[0])
    shown.left = [process for row in rows for process in row.left]
    return shown


def prepared(
    folder: Path,
    spec: ExploreSpec,
    point: dict,
    clean: dict,
    job_fields: Callable[[Path], dict],
    restart: str | None = None,
) -> tuple:
    """A point's row (its run folder made, unless the recording's fork left it) and the job
    that crashes there; given a `restart`, the crash state is made for that restart alone,
    in the point's folder for the first, in a folder `after-<restart>` in it for another."""
    run_dir = Path(point_folder(str(folder), point["n"]))
    if restart not in (None, spec.restarts[0]):
        run_dir = run_dir / f"{AFTER}{restart}"
    row = exploration_row(point, spec, run_dir)
    row.restart = restart
    if point["forked"] is None:
        run_dir.mkdir(parents=True, exist_ok=restart is not None)
    plan = {k: point[k] for k in ("op", "detail", "nth")}
    killed_parent = point["forked"] and point["forked"]["parent"]  # the recording's parent
    point = {k: point[k] for k in ("n", "op", "detail", "nth", "where")}
    job = spec.job(crash_at=plan, point=point, clean=clean, killed_parent=killed_parent)
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
            failed(row, f"{not_killed} {said}", "not_killed_worker", said=said)
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


def judged(row: PointResult, report: dict) -> None:
    """The checker's word on a row (the default checker's as a code too), or why there is none
    (the checker raised, or the recovery wrote outside the run folder)."""
    if report.get("outside"):
        files = ", ".join(report["outside"])
        row.outcome = FAILED
        failed(row, f"the recovery wrote outside its run folder: {files}", OUTSIDE, files=files)
        return
    if "checker_error" in report:
        error = report["checker_error"]
        row.outcome = FAILED
        failed(row, f"the checker raised {error}", CHECKER_RAISED, error=error)
        return
    row.outcome, row.complaint = report["outcome"], report["complaint"]
    row.finding = report.get("finding")
