"""The explorer's worker: one process of one crash state, in one of three roles.

- `record`: run the reader's code once without a crash, numbering every crash point it passes
  (with the files' state at each), and check its end state too;
- `first`: run it again and die at the planned crash point (SIGKILL, or `os._exit`);
- `recovery`: as after a real restart (a new pid and parent, clocks moved as the job's
  `restart` says, a day later by default: `bench.restart`; it forks for a new parent only if
  the killed process had its parent; the launcher starts the new hash seed's fresh),
  read what the kill left, recover (study 000's rule for a step, `invoke(None)` for a graph,
  the callable itself with resume=True),
  read it again, and let the checker judge.

In every role the reader's code ends as a Python program ends (`end_as_python_ends`): its
threads and its pools' work done, its files closed, before the state is read or the worker
exits. What it saw goes into `<role>.json` (`gate.report`); the reader's errors go to stderr, as in
every worker, and in one line into the report. A target or checker that names no code of its
kind is bad input: the report says so (`bad_target`), before any of the reader's code runs.
A step worker imports only the standard library (a graph's: LangGraph too).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Callable

from labkit.bench.gate import report
from labkit.bench.installed import newly_imported
from labkit.bench.restart import new_parent, next_attempt, restart_here, seconds_until
from labkit.bench.trace import Trace
from labkit.studies.explorer import clock_reads
from labkit.studies.explorer.checker import CrashState, Finding, default_checker, outcome_of
from labkit.studies.explorer.code_cache import use_cache
from labkit.studies.explorer.disk_waits import skip_disk_waits
from labkit.studies.explorer.network import watch_network
from labkit.studies.explorer.node_caches import node_caches, unjudged
from labkit.studies.explorer.postgres_runs import enter_schema, read_schema
from labkit.studies.explorer.programs import watch_programs
from labkit.studies.explorer.record import CrashPoints, stack_of
from labkit.studies.explorer.restart_forks import (
    ALSO,
    restarts_apart,
    take_for_the_others,
    tell,
    wait_for,
)
from labkit.studies.explorer.services import bookkeeping, serve_here, watch_claims
from labkit.studies.explorer.states import ignored_file, kept_in, read_state
from labkit.studies.explorer.target import BadTarget, load_function

__all__ = ["run"]

WORLDS = {
    "step": "labkit.studies.explorer.steps",
    "graph": "labkit.studies.explorer.graphs",
    "callable": "labkit.studies.explorer.callables",
}


def run(job: dict) -> None:
    """The worker's entry (`labkit.studies.explorer.worker:run`): a recovery given several
    restarts forks a child for each but its first (`restart_forks`) and waits for them. What
    the kill left is read once, before the copies, and each child has it already: the copies
    hold the same state (reading a SQLite file merges its WAL; the state is the same), and
    reading no clock nor the reader's code, it is the same at every restart. The children
    wait: as soon as the reader's code reads a clock that a restart moves (`clock_reads`),
    they go on; if it read none, theirs would do what this one did, and each takes its
    report as its own."""
    loaded = list(sys.modules)  # what the server gave it: the recording says what it added
    at_kill = state_of(job) if job.get(ALSO) else None
    job, children = restarts_apart(job)
    if job is None:  # the other restarts would do what this recovery did: it says so
        return
    clock_reads.when_read(lambda: tell(children, same=False))  # theirs may differ: go now
    same = False
    try:
        run_one(job, loaded, at_kill)
        same = job["role"] == "recovery" and bool(job.get(ALSO)) and not clock_reads.read()
        if same:
            take_for_the_others(job)
    finally:
        tell(children, same)
        wait_for(children)


def run_one(job: dict, loaded: list[str], at_kill: dict | None = None) -> None:
    """One worker's part: a run from the start, or one restart's recovery (`at_kill`: what the
    kill left, if it was read already)."""
    skip_disk_waits()
    if job.get("fork_to") or job.get("own_parent"):  # it, or its forks, will be killed: under
        new_parent()  # a parent of its own, so that no recovery needs a new parent of its own
    later = seconds_until(job.get("restart", "day"))
    if job["role"] == "recovery" and job.get("killed_parent") in (None, os.getppid()):
        restart_here(later)
    elif job["role"] == "recovery":
        next_attempt(later)  # its pid and parent differ from those the killed code saw
    if job.get(ALSO):  # other restarts wait: did the reader's code read a clock, as moved?
        clock_reads.watch_clock_reads()
    trace = Trace(job["run_dir"], job["role"])
    use_cache(job.get("code_cache"))  # the reader's module, compiled once an exploration
    enter_schema(job)  # before the reader's code connects
    trace.note("start", target=job["target"]["label"], kind=job["kind"])
    world = importlib.import_module(WORLDS[job["kind"]])
    try:
        if job["role"] == "recovery":
            serve_here(job, None)
            recover_and_check(job, world, trace, the_checker(job), at_kill)
        else:
            run_from_the_start(job, world, trace, loaded)
    except BadTarget as error:  # the caller's bad input, not the reader's code failing
        report(job, bad_target=str(error), code=error.code, fields=error.fields)
        raise
    trace.note("exit", code=0)


def run_from_the_start(job: dict, world: object, trace: Trace, loaded: list[str]) -> None:
    """Run the reader's code, numbering its crash points (dying at the planned one); the
    recording also judges the state it ends in, and names the installed modules it imported
    beyond `loaded` (the server imports them for the workers to come: `bench.preload`)."""
    points = CrashPoints(job, trace, ())
    watch_claims(points)  # before the reader's module is loaded
    watch_network(points)
    watch_programs(points)
    serve_here(job, points)
    recording = job["role"] == "record"
    checker = the_checker(job) if recording else None  # a wrong name: said before the code runs
    finished = world.run_first(job, points) is not False  # a graph says; a step ends done
    end_as_python_ends(points)
    points.reap()
    if recording:
        kept = bookkeeping()  # the service's files, where the run called it
        points.note_changes_without_a_point(ignored=kept)
        end = state_of(job)
        caches = node_caches(job["run_dir"], end)  # LangGraph's own
        seen = judged_part(end, [*job["ignore_files"], *kept, *unjudged(caches)])
        state = CrashState(None, seen, seen, seen, finished=finished, run_dir=job["run_dir"])
        verdict = judge(checker, state)
        report(
            job,
            state=end,
            temporaries=sorted(points.pointed - files_of(job["run_dir"], end)),
            points=points.count,
            imported=newly_imported(loaded),
            bookkeeping=kept,
            node_caches=caches,
            **verdict,
        )


def end_as_python_ends(points: CrashPoints) -> None:
    """Wait as a Python program waits once its code has returned (a worker ends with
    `os._exit`, which waits for nothing): the work handed to thread pools done (the hooks
    `concurrent.futures` registers for the interpreter's exit), then every thread that is no
    daemon ended, then the files it left open closed (`close_open_files`). A mail a node
    hands to a thread and returns is then sent in every run, and a crash after the node's
    writes are saved, before the thread sent it, is found to lose it; a thread that never ends
    is the worker's timeout, as a program that never exits; a daemon thread of the reader's
    still running is noted (`note_left_running`): what it does next is never explored."""
    for hook in reversed(getattr(threading, "_threading_atexits", [])):
        hook()
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    stacks = sys._current_frames()  # the daemons Python leaves running: where each is now
    points.note_left_running(
        stack_of(stacks[thread.ident])
        for thread in threading.enumerate()
        if thread is not threading.current_thread() and thread.ident in stacks
    )
    points.close_open_files()
    if points.watch is not None:
        points.watch.observe()  # a commit of the threads' last statement


def state_of(job: dict) -> dict:
    """What the run holds: its folder's files, and its Postgres schema if it has one."""
    return {**read_state(job["run_dir"]), **read_schema(job)}


def files_of(run_dir: str, state: dict) -> set[str]:
    """The files a state was read from: its entries', a dbm.dumb shelf's index too (`kept_in`).
    A file the run wrote and is not among them, it renamed or removed: a temporary."""
    return {file for name in state for file in kept_in(run_dir, name)}


def judged_part(state: dict, patterns: list[str]) -> dict:
    """What a checker sees of a state: every file but those the job says are no effect
    (`ignore_files`, patterns: a log; the bookkeeping of a service the run called), which the
    reports keep all the same."""
    return {name: held for name, held in state.items() if not ignored_file(name, patterns)}


def the_checker(job: dict) -> Callable:
    """The reader's checker, if the job names one, else the default."""
    return load_function(job["checker"])[0] if job.get("checker") else default_checker


def recover_and_check(
    job: dict, world: object, trace: Trace, checker: Callable, at_kill: dict | None = None
) -> None:
    """Read what the kill left (unless `at_kill` says it), recover, read again, and judge; name
    the files it wrote outside the run folder, the services it connected to and the programs
    it started (each recovery would do it again: the exploration fails)."""
    at_kill = state_of(job) if at_kill is None else at_kill
    watch = CrashPoints(job, trace, ())
    watch.watch_outside()
    watch_network(watch)
    watch_programs(watch)
    try:
        finished, error = world.recover(job, trace), None
    except Exception as exc:  # the reader's recovery failed: an outcome, said in one line
        finished, error = False, said(exc)
    end_as_python_ends(watch)
    after = state_of(job)
    state = CrashState(
        job["point"],
        judged_part(at_kill, job["ignore_files"]),
        judged_part(after, job["ignore_files"]),
        judged_part(job["clean"], job["ignore_files"]),
        finished,
        error,
        job["run_dir"],
        tuple(job["temporaries"]),
    )
    report(
        job,
        at_kill=at_kill,
        after=after,
        finished=finished,
        recovery_error=error,
        outside=sorted(watch.outside),
        **judge(checker, state),
    )


def said(error: Exception) -> str:
    """An error of the reader's code: its traceback on stderr, and itself in one line."""
    from labkit.bench.spares import error_summary, print_error  # only where an error came

    print_error(error)
    return error_summary(error)


def judge(checker: Callable, state: CrashState) -> dict:
    """The checker's answer ({complaint, outcome}, and the default checker's finding: its code
    and fields), or the error it raised ({checker_error})."""
    try:
        complaint = checker(state)
        if complaint is not None and not isinstance(complaint, str):
            raise TypeError(f"a checker returns None or a str, not {type(complaint).__name__}")
    except Exception as exc:
        return {"checker_error": said(exc)}
    finding = complaint.as_dict() if isinstance(complaint, Finding) else None
    return {"complaint": complaint, "outcome": outcome_of(complaint), "finding": finding}
