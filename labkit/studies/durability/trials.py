"""Study 004's trials as the trial server runs them (the story: `studies.durability.experiment`).

Runs only inside the trial server: it imports LangGraph (through `studies.durability.graphs`).

Each worker is forked from the server, which has LangGraph imported already; the counting and
the ledger reading happen here too, so a whole matrix is one call from the kernel. A matrix
runs its trials LANES at a time (`bench.side_by_side`), each trial a run that yields the worker it
waits for.
"""

from __future__ import annotations

from pathlib import Path

from labkit.bench.checkpoints import (
    CHECKPOINT_FILE,
    PUTS_FILE,
    postgres_counts,
    set_up_postgres,
)
from labkit.bench.failures import failing_run, first_failure
from labkit.bench.folders import keep_json, new_run_dir
from labkit.bench.launcher import WorkerProcess, read_report
from labkit.bench.ledger import LEDGER_FILE, read_ledger, rerun_nodes
from labkit.bench.postgres import new_schema, redacted, shared_url
from labkit.bench.side_by_side import Run, side_by_side, until_ended
from labkit.bench.snapshot import read_only
from labkit.bench.trace import read_json_lines
from labkit.studies.durability.experiment import (
    BASELINE_LINES,
    DurabilitySpec,
    Progress,
    Trial,
)
from labkit.studies.durability.graphs import AFTER_B, TARGET_NODE

__all__ = ["LANES", "clean_run", "describe_checkpoints", "run_trial", "run_trials"]

# Trials side by side in a matrix: most of a trial is waiting (a worker's way to its point,
# fsyncs, a process's teardown), so two at once on two cores take little more than one.
LANES = 2


def checkpoint_counts(run_dir: Path) -> tuple[int, int, int]:
    """(checkpoints, writes, writes of unsaved checkpoints), read-only, as the kill left them."""
    path = run_dir / CHECKPOINT_FILE
    if not path.exists():
        return 0, 0, 0
    with read_only(path) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        if not {"checkpoints", "writes"} <= tables:
            return 0, 0, 0
        return db.execute(
            "SELECT (SELECT count(*) FROM checkpoints), (SELECT count(*) FROM writes),"
            " (SELECT count(*) FROM writes WHERE checkpoint_id NOT IN"
            "  (SELECT checkpoint_id FROM checkpoints))"
        ).fetchone()


AT_KILL = "at-kill"


def read_as_killed(run_dir: Path) -> dict[str, bytes]:
    """The checkpoint file (with its WAL) and the ledger as the kill left them, read before
    recovery changes them. A first worker that failed early may have left neither."""
    paths = [*run_dir.glob(f"{CHECKPOINT_FILE}*"), run_dir / LEDGER_FILE]
    return {path.name: path.read_bytes() for path in paths if path.exists()}


def keep_as_killed(run_dir: Path, files: dict[str, bytes]) -> Path:
    """Write `read_as_killed`'s bytes to the folder everything about the moment of the kill is
    read from. Called while the recovery runs: each new file costs this machine's file system
    the better part of a millisecond, which the recovery need not wait for."""
    (run_dir / AT_KILL).mkdir()
    for name, data in files.items():
        (run_dir / AT_KILL / name).write_bytes(data)
    return run_dir / AT_KILL


def saver_schema(run_dir: Path, postgres_url: str | None) -> dict:
    """A new schema for PostgresSaver, its tables set up (its migrations: about 70 ms, so a
    matrix makes one for all its trials), on labkit's own server unless the reader named one."""
    url = postgres_url or shared_url()
    schema = new_schema(url, run_dir)
    set_up_postgres(url, schema)
    return {"postgres_url": url, "schema": schema}


def checkpointer_job(
    spec: DurabilitySpec, run_dir: Path, postgres_url: str | None, shared: dict | None = None
) -> dict:
    """What a worker needs to open the spec's checkpointer besides the run folder: nothing for
    SQLite; for Postgres, a schema (the matrix's `shared` one, else a new one) and a thread of
    the trial's own in it, named after its folder."""
    if spec.checkpointer != "postgres":
        return {}
    job = {**(shared or saver_schema(run_dir, postgres_url)), "thread_id": run_dir.name}
    where = {"server": redacted(job["postgres_url"]), "schema": job["schema"]}
    keep_json(run_dir, postgres={**where, "thread_id": job["thread_id"]})
    return job


def put_ms(run_dir: Path) -> list[float]:
    """How long each put() of the run's workers took, in milliseconds."""
    return [line["ms"] for line in read_json_lines(run_dir / PUTS_FILE) if line["call"] == "put"]


def worker(
    spec: DurabilitySpec, run_dir: Path, role: str, entry: str, saver: dict, **plan: object
) -> WorkerProcess:
    return WorkerProcess(
        run_dir,
        role,
        f"labkit.studies.durability.graphs:{entry}",
        {**spec.job, **saver},
        timeout=spec.timeout,
        start_mode=spec.start_mode,
        **plan,
    )


def run_trial(
    spec: DurabilitySpec,
    out: Path | str | None = None,
    postgres_url: str | None = None,
    shared: dict | None = None,
) -> Trial:
    """One trial in a new folder; if the parent cannot write there (a full disk), RunFailed."""
    [(_, trial)] = side_by_side([trial_run(spec, out, postgres_url, shared)], lanes=1)
    return trial


def trial_run(
    spec: DurabilitySpec, out: Path | str | None, postgres_url: str | None, shared: dict | None
) -> Run:
    """`run_trial` as a run of `bench.side_by_side`: it yields each worker it waits for."""
    run_dir = new_run_dir(out, prefix="durability-")
    with failing_run(run_dir):
        saver = checkpointer_job(spec, run_dir, postgres_url, shared)
        return (yield from kill_and_recover(spec, run_dir, saver))


def kill_and_recover(spec: DurabilitySpec, run_dir: Path, saver: dict) -> Run:
    """Kill inside the target node with SIGKILL, count the checkpoint rows, recover, count lines.

    A worker that did not do what was planned (an error, a timeout) makes the trial failed.
    Postgres rows are counted before recovery starts (there is no file to copy)."""
    target = TARGET_NODE[spec.graph]
    point = AFTER_B if spec.kill_moment == "checkpoint_after_b" else f"inside:{target}"
    with worker(spec, run_dir, "first", "first_run", saver, pause_at=(point,)) as first:
        while (stopped_at := (yield first)) is not None:  # as WorkerProcess.finish(point)
            if stopped_at == point:
                # SQLite: the files are as the kill left them once every thread has stopped;
                # the killed worker is torn down beside the recovery, and reaped at the end
                # of this block. Postgres: reaped first, its connection closed.
                first.kill(reap=bool(saver))
                break
            first.resume()
        else:
            first.wait()
        files_at_kill = read_as_killed(run_dir)
        in_postgres = postgres_counts(**saver) if saver else None
        with worker(spec, run_dir, "recovery", "recover", saver) as recovery:
            as_killed = keep_as_killed(run_dir, files_at_kill)
            checkpoints, writes, orphans = in_postgres or checkpoint_counts(as_killed)
            at_kill = read_ledger(as_killed)
            yield from until_ended(recovery)
    recovered = read_report(run_dir, "recovery")
    lines = read_ledger(run_dir)
    phases = {(ln["node"], ln["phase"]) for ln in at_kill}
    failure = first_failure([(first.report(), point), (recovery.report(), None)])
    trial = Trial(
        spec=spec,
        run_dir=str(run_dir),
        first_exit=first.proc.returncode,
        killed_inside=first.killed_at == point
        and (point == AFTER_B or ((target, "start") in phases and (target, "end") not in phases)),
        checkpoints=checkpoints,
        writes=writes,
        orphan_writes=orphans,
        resumed=recovered.get("resumed", False),
        recovery_error=recovered.get("error"),
        ledger_lines=len(lines),
        baseline_lines=BASELINE_LINES[spec.graph],
        rerun_nodes=rerun_nodes(lines),
        pids=[first.proc.pid, recovery.proc.pid],
        failure=failure,
        put_ms=put_ms(run_dir),
    )
    keep_json(run_dir, results=trial.summary())
    return trial


def no_race(spec: DurabilitySpec) -> bool:
    """Whether a trial of `spec` may run beside another: not when its outcome is a race that
    another trial's load would tilt (a delayed put that the nodes run ahead of, in `async` or
    `exit`; a delayed put_writes; a kill as put() starts; a Postgres server shared by both).
    A delayed put in `sync` is no race: no node runs before its checkpoint is saved."""
    return (
        spec.checkpointer == "sqlite"
        and (not spec.slow_ms or spec.mode == "sync")
        and not spec.writes_delay_ms
        and spec.kill_moment != "checkpoint_after_b"
    )


def run_trials(
    specs: list[dict],
    trials: int = 4,
    out: str | None = None,
    progress: Progress | None = None,
    postgres_url: str | None = None,
) -> list[Trial]:
    """`trials` trials of each spec (given as a dict), each in its own folder under `out`: first
    those whose outcome is no race (`no_race`), LANES at a time, then the others one at a time;
    `progress` counts them as they end, the list keeps the specs' order."""
    specs = [DurabilitySpec(**spec) for spec in specs]
    root = new_run_dir(out, prefix="durability-trials-")
    postgres = any(spec.checkpointer == "postgres" for spec in specs)
    shared = saver_schema(root, postgres_url) if postgres else None
    planned = [(spec, root / spec.trial_folder(n + 1)) for spec in specs for n in range(trials)]
    done = {}
    for alone in (False, True):
        picked = [i for i, (spec, _) in enumerate(planned) if no_race(spec) != alone]
        runs = (trial_run(*planned[i], postgres_url, shared) for i in picked)
        for index, trial in side_by_side(runs, 1 if alone else LANES):
            done[picked[index]] = trial
            if progress:
                progress(len(done), len(planned), trial)
    return [done[index] for index in range(len(planned))]


def clean_run(spec: dict, out: str | None = None, postgres_url: str | None = None) -> dict:
    """One clean run of the graph (no kill): its wall time, measured inside the worker, the
    checkpoints it saved, and how long each put() took."""
    spec = DurabilitySpec(**spec)
    run_dir = new_run_dir(out, prefix="durability-clean-")
    saver = checkpointer_job(spec, run_dir, postgres_url)
    with worker(spec, run_dir, "clean", "clean_run", saver) as clean:
        clean.wait()
    return {**read_report(run_dir, "clean"), "put_ms": put_ms(run_dir)}


def describe_checkpoints(spec: dict, run_dir: str, at_kill: bool = True) -> dict:
    """A trial folder's checkpoints and writes, decoded by LangGraph in a worker: as the kill
    left them (the copy), or as recovery left them."""
    run_dir = Path(run_dir) / AT_KILL if at_kill else Path(run_dir)
    with worker(DurabilitySpec(**spec), run_dir, "describe", "describe", {}) as describer:
        describer.wait()
    return read_report(run_dir, "describe")
