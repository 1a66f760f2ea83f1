"""The crash explorer: run the reader's code once, then crash it at every crash point it passed.

Record: a worker runs the code without a crash and numbers every crash point (`record.py`),
with the state of the files at each. Replay: for each distinct crash state, a process that ran
the code to its first point is killed there, and a fresh worker recovers and lets the checker
judge (`worker.py`); points whose crash states are equal are explored once and counted. For a
step, and a graph under durability "sync" (its saves then run in order, in the thread that
reaches the point), that process is a fork the recording makes at the point (so nothing runs
twice to get there); for a graph whose saves run in threads a fork would not take along
("async"), or whose state is partly in Postgres, it is a worker that runs the graph again to
the point (`replays.py`). What to explore is an `ExploreSpec`
(`spec.py`). Report: a row per point (`report.py`), written to the exploration's folder as it
goes, so a Ctrl-C or a checker that raises still leaves, and returns, what was explored.

A server of the bench runs the whole exploration (`explore_in`) and reports each row as it
goes: the trial server for a graph, the light one (no LangGraph: its forks are cheaper still)
for a step. Its workers are its forks, which start in milliseconds where a fresh interpreter
takes tens, and the kernel and the CLI never import the reader's code.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from labkit.bench import server
from labkit.bench.errors import (
    CodeFailed,
    LabError,
    check_choice,
    check_folder,
    check_function,
    refusal,
)
from labkit.bench.failures import run_failed, worker_failure
from labkit.bench.folders import keep_json, new_run_dir, release_run_dir
from labkit.bench.launcher import read_report
from labkit.bench.preload import preload
from labkit.bench.trace import read_trace
from labkit.studies.explorer.postgres_runs import RunSchemas
from labkit.studies.explorer.replays import (
    CHECKER_RAISED,
    INTERRUPTED,
    NETWORK,
    OUTSIDE,
    PROGRAMS,
    RUN_OUTSIDE,
    exploration_row,
    judged,
    replayed,
    run_workers,
    shown_first,
)
from labkit.studies.explorer.report import (
    EXPLORED_FILE,
    Exploration,
    PointResult,
    read_explored,
    replays_twice,
)
from labkit.studies.explorer.spec import ExploreSpec
from labkit.studies.explorer.states import ignored_file, unreadable
from labkit.studies.explorer.target import check_importable, name_target, on_import_path
from labkit.studies.explorer.with_files import check_apart, copy_in

__all__ = ["explore", "explore_in", "explore_spec"]

# Why writes went unwatched (the commit watch could not crash them apart: bench.commit_watch,
# the recording could not read them, or work of the reader's was still running at its end:
# its "files" are then that work's names); the words are explorer.toml's [unwatched]
UNWATCHED = ("wal", "uncounted", "together", "unreadable", "no_point", "running")
SERVERS = {"step": "light", "graph": "trial", "callable": "trial"}  # a step's need no LangGraph
FORKED = ("step",)  # the kinds whose recording forks a process to kill at each crash state
AGAIN = "again"  # the folder of a second replay of every crash state (`replays_twice`)
Progress = Callable[[int, int, PointResult], None]


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
    ignore_files: object = (),
    with_files: object = (),
    harmless_programs: object = (),
) -> Exploration:
    """Crash `target` ('module:callable') at every crash point it passes and check each state,
    recovered after each restart `restart_at` names (default: the kind's own, RESTARTS_BY_KIND).
    A graph's interrupts are answered `resume` (a JSON value; True by default), or, given a
    'module:function', what it returns of each interrupt's payload (`resume_by`), or the
    answers of the list `resumes` in turn (the n-th interrupt the run meets, the n-th); `config`
    is given to its every invoke (e.g. {"configurable": {"user_id": "u1"}}), under
    `durability` ("sync" by default; LangGraph's own default is "async": give the mode your
    code invokes with). `timeout` is
    each worker's, in seconds. `path`, a folder, goes first on the workers' import path (for
    a module that imports its siblings); none by default. `postgres`, "lab" or a server's
    URL, gives every run a schema of its own there for the nodes' rows, whose commits are crash
    points (`postgres_runs`), and for a graph compiled with a Postgres saver, its checkpoints
    (`postgres_saver`); without it, a write to Postgres fails the exploration, and such a
    graph's checkpoints are explored on SQLite, as the report says. `ignore_files`, patterns
    of files in the run folder ("*.log"), names what is no effect (a log that says "booking"
    again after a crash): crash points still come after their writes, but no checker sees them.
    `with_files`, files or folders your code reads by a relative path (prompts/, config.yaml),
    are copied into every run folder before it runs there. A program your code starts
    (`subprocess.run(["curl", ...])`, `os.system`) fails the exploration: the explorer cannot
    see what it does beyond the run folder's files, and every replay would start it again;
    `harmless_programs` names those that reach nothing outside the run folder, by name ("sh"
    for a command line, shell=True or os.system; "convert"), and the summary says so.

    A Ctrl-C, or a checker that raises, ends the exploration early: what was explored comes
    back all the same, with `stopped` saying why."""
    if not isinstance(one_file, bool):
        raise refusal("bool", what="one_file", value=repr(one_file))
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
        ignore_files=ignore_files,
        with_files=with_files,
        harmless_programs=harmless_programs,
    )
    check_importable(spec.target, spec.checker, spec.resume_by)  # at once, not in a worker
    check_function("progress", progress)
    out = check_folder("out", out)
    check_apart(spec.with_files, out)
    folder = new_run_dir(out, "explore-", deepest="point-000/recovery.stdout")
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
        return explore_with(Path(folder), spec, schemas, progress)


def explore_with(
    folder: Path, spec: ExploreSpec, schemas: RunSchemas, progress: Progress | None
) -> dict:
    """`explore_in`'s work, with the runs' schemas on a Postgres server, if it has one."""
    started = time.monotonic()
    exploration = Exploration(spec.target["label"], spec.kind, str(folder), spec=asdict(spec))
    record = recording(folder, spec, schemas)
    preload(record.get("imported", ()))  # the replays' workers start with the reader's imports
    exploration.clean, exploration.unwatched = record["state"], record["unwatched"]
    exploration.temporaries, exploration.bookkeeping = record["temporaries"], record["bookkeeping"]
    exploration.node_caches = record["node_caches"]
    exploration.outside, exploration.replaced = record["outside"], record["replaced"]
    clean_row = PointResult(None, "run", "to its end", None, "", None, record["run_dir"])
    clean_row.left = record["left"]
    judged(clean_row, record, RUN_OUTSIDE)
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
        rows = replayed(base, spec, to_explore, exploration.truth, schemas)
        with contextlib.closing(rows) as done:
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
            if row.failed and row.failed["code"] in (OUTSIDE, NETWORK[OUTSIDE], PROGRAMS[OUTSIDE])
            for file in row.failed["files"]
        }
        - set(exploration.outside)
    )
    exploration.seconds = round(time.monotonic() - started, 3)
    keep_json(Path(folder), results=exploration.to_json())
    return exploration.to_json()


def compared(row: PointResult, again: list[dict[int, PointResult]]) -> PointResult:
    """A crash state's row, beside its second replay's: where the two outcomes differ, the
    failing one is shown (`shown_first`), marked `varies` (asserting that row in CI would be
    flaky)."""
    other = again[0].get(row.n) if again else None
    if other is None or other.outcome == row.outcome:
        return row
    shown = shown_first([row, other])
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
    copy_in(run_dir, spec.with_files)  # the forks' crash states copy them from here
    fork_to = str(folder) if forks_at_points(spec) else None
    job = spec.job(point=None, clean=None, fork_to=fork_to, code_cache=str(folder))
    job["fork_each"] = spec.kind not in FORKED  # a graph's points are each a crash state
    job.update(schemas.job_fields(run_dir))
    ended = run_workers({0: run_dir}, "record", {0: job}, spec)[0]
    report = read_report(run_dir, "record")
    if "bad_target" in report:  # a name that names no code of its kind: checked by loading it
        raise LabError(report["bad_target"], report["code"], **report["fields"])
    trace = read_trace(run_dir)
    outside = [e["file"] for e in trace if e["event"] == "outside"]
    outside += schemas.outside(run_dir)  # what the server says its role made elsewhere
    if ended.exit_code != 0 or ended.timed_out:
        why = worker_failure(ended)
        if not outside:  # else the server refused it a write outside: said as such, not green
            raise run_failed(why, run_dir, "code_failed", CodeFailed)
        # no crash state to explore: its writes go elsewhere
        report, trace = {"state": {}, "temporaries": [], "bookkeeping": [], "node_caches": []}, []
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
    # writes of files no checker sees (`ignore_files`: a log, a cache) are no loss
    unwatched = [u for u in unwatched if not all_ignored(u["files"], spec.ignore_files)]
    forked = {e["n"]: e for e in trace if e["event"] == "forked"}
    replaced = next(
        ({k: e[k] for k in ("saver", "postgres")} for e in trace if e["event"] == "replaced"), None
    )
    return {
        **report,
        "points": points,
        "run_dir": str(run_dir),
        "unwatched": unwatched,
        "outside": outside,
        "replaced": replaced,
        "forked": forked,
        "left": ended.left,
    }


def forks_at_points(spec: ExploreSpec) -> bool:
    """Whether the recording forks the process killed at each crash state (`CrashPoints`):
    a step's always; a graph's under durability "sync" (its saves then run in order, in the
    thread that reached the point: `graphs.run_in_order`), unless each state is replayed
    twice or a Postgres schema, which no folder's copy takes along, is part of it. A point
    reached while another thread runs is still replayed by a worker that runs to it."""
    if spec.kind in FORKED:
        return True
    return spec.kind == "graph" and spec.durability == "sync" and not spec.postgres


def all_ignored(files: list[str], patterns: tuple[str, ...]) -> bool:
    """Whether every file of an unwatched entry is one no checker sees (`ignore_files`); an
    entry that names another file too still keeps the matrix from green."""
    return bool(patterns) and all(ignored_file(file, patterns) for file in files)


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
