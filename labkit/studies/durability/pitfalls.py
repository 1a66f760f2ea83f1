"""Study 004's five real errors, reproduced live in worker processes, with today's texts.

The kernel never imports LangGraph: `run_pitfall(name)` asks the trial server, which forks a
worker per pitfall (two for the locked database); each worker calls LangGraph and reports the
exception type, its message, and any warnings, exactly as raised.
"""

from __future__ import annotations

import os
import sqlite3
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from labkit.bench import server
from labkit.bench.errors import check_choice, check_function
from labkit.bench.folders import new_run_dir
from labkit.bench.gate import report
from labkit.bench.launcher import WorkerProcess, read_report
from labkit.bench.side_by_side import Run, side_by_side, until_ended

__all__ = ["PITFALLS", "Pitfall", "run_pitfall", "run_pitfalls"]


@dataclass(frozen=True)
class Pitfall:
    title: str
    study_said: str  # what study 004 reported, to compare with what happens today


PITFALLS = {
    "recover_after_exit_kill": Pitfall(
        "Recovery after a kill in exit mode",
        "EmptyInputError: Received no input for __start__ (the checkpoint table is empty)",
    ),
    "unknown_thread": Pitfall(
        "invoke(None) on a thread_id that never existed",
        "EmptyInputError: Received no input for __start__",
    ),
    "durability_without_checkpointer": Pitfall(
        "durability='sync' on a graph compiled without a checkpointer",
        "UserWarning 'durability has no effect when no checkpointer is present', then "
        "AttributeError: 'SyncPregelLoop' object has no attribute '_put_checkpoint_fut'",
    ),
    "checkpoint_during_and_durability": Pitfall(
        "The old checkpoint_during flag together with durability",
        "ValueError: Cannot use both checkpoint_during and durability parameters. "
        "Please use durability instead.",
    ),
    "database_is_locked": Pitfall(
        "A second process writes while the first holds the write lock (timeout 0.3 s)",
        "sqlite3.OperationalError: database is locked",
    ),
    "mistyped_durability": Pitfall(
        "durability='syncc' (a typo)", "accepted silently, no warning; behaves like async"
    ),
}


def caught(job: dict, action: Callable[[], object]) -> None:
    """Run `action`, then report what it raised and warned, as LangGraph said it."""
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        try:
            outcome = action()
            raised = None
        except Exception as error:
            outcome, raised = (
                None,
                {
                    "type": type(error).__name__,
                    "message": str(error),
                    "module": type(error).__module__,
                },
            )
    report(
        job,
        raised=raised,
        outcome=outcome,
        warnings=[f"{w.category.__name__}: {w.message}" for w in warned],
    )


# --- worker entries (run in processes forked from the trial server, where LangGraph is loaded)


def invoke_parallel(
    job: dict,
    graph_input: dict | None,
    config: dict | None = None,
    *,
    checkpointer: bool = True,
    timeout: float = 5.0,
    **options: object,
) -> dict:
    """Invoke the parallel graph, with this process's own SqliteSaver (or none at all)."""
    from labkit.bench.checkpoints import open_saver, with_saver
    from labkit.bench.ledger import Ledger
    from labkit.studies.durability.graphs import SHAPES, RunContext

    graph = SHAPES["parallel"]
    if checkpointer:
        graph = with_saver(graph, open_saver(job["run_dir"], timeout=timeout))
    hooks = RunContext(Ledger(job["run_dir"]))
    return graph.invoke(graph_input, config, context=hooks, **options)


THREAD = {"configurable": {"thread_id": "pitfall"}}


def unknown_thread(job: dict) -> None:
    never_existed = {"configurable": {"thread_id": "never-existed"}}
    caught(job, lambda: invoke_parallel(job, None, never_existed))


def durability_without_checkpointer(job: dict) -> None:
    caught(job, lambda: invoke_parallel(job, {"log": []}, checkpointer=False, durability="sync"))


def checkpoint_during_and_durability(job: dict) -> None:
    caught(
        job,
        lambda: invoke_parallel(
            job, {"log": []}, THREAD, checkpoint_during=True, durability="sync"
        ),
    )


def hold_write_lock(job: dict) -> None:
    """The first writer: a write transaction left open, as a half-dead old process would."""
    from labkit.bench.checkpoints import CHECKPOINT_FILE
    from labkit.bench.gate import Gate
    from labkit.bench.trace import Trace

    invoke_parallel(job, {"log": []}, THREAD)  # creates the tables
    conn = sqlite3.connect(os.path.join(job["run_dir"], CHECKPOINT_FILE), isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    Gate(Trace(job["run_dir"], job["role"]), job)("holding_lock")


def write_while_locked(job: dict) -> None:
    second = {"configurable": {"thread_id": "second"}}
    caught(job, lambda: invoke_parallel(job, {"log": []}, second, timeout=0.3))


def timed_modes(job: dict) -> None:
    """Each spelling on a 100 ms checkpointer: does node b wait for the checkpoint after a?"""
    from labkit.bench.checkpoints import open_saver, with_saver
    from labkit.bench.ledger import Ledger, read_ledger
    from labkit.studies.durability.graphs import SHAPES, RunContext

    def gap_before_b(mode: str) -> dict:
        folder = os.path.join(job["run_dir"], mode)
        os.mkdir(folder)
        graph = with_saver(SHAPES["linear"], open_saver(folder, 100))
        hooks = RunContext(Ledger(folder))
        result = graph.invoke({"log": []}, THREAD, durability=mode, context=hooks)
        t = {(ln["node"], ln["phase"]): ln["t_ns"] for ln in read_ledger(folder)}
        wait_ms = (t[("b", "start")] - t[("a", "end")]) / 1e6
        return {"mode": mode, "nodes_run": len(result["log"]), "b_waited_ms": round(wait_ms, 1)}

    caught(job, lambda: [gap_before_b(mode) for mode in ("sync", "syncc", "async")])


# --- the server side: start the workers, collect their reports


def run_here(name: str, out: str | None = None) -> dict:
    """In the trial server: reproduce one pitfall in fresh worker processes; return the report."""
    check_choice("pitfall", name, PITFALLS)
    [(_, found)] = side_by_side([pitfall_run(name, out)], lanes=1)
    return found


# Its claim is a time (does b wait for a 100 ms put?): no other pitfall's load beside it.
TIMED = ("mistyped_durability",)


def run_all_here(progress: Callable[[int, int, None], None] | None = None) -> dict:
    """In the trial server: every pitfall, LANES at a time but TIMED, which runs alone after the
    others (each one's outcome is an error or a lock that no neighbour's load can change);
    `progress(done, total, None)` as each ends. The reports in PITFALLS' order."""
    from labkit.studies.durability.trials import LANES

    reports = {}
    for lanes, group in ((LANES, [n for n in PITFALLS if n not in TIMED]), (1, list(TIMED))):
        for index, found in side_by_side((pitfall_run(name) for name in group), lanes):
            reports[group[index]] = found
            if progress:
                progress(len(reports), len(PITFALLS), None)
    return {name: reports[name] for name in PITFALLS}


def pitfall_run(name: str, out: str | None = None) -> Run:
    """One pitfall as a run of `bench.side_by_side`: it yields each worker it waits for."""
    if name == "recover_after_exit_kill":
        from labkit.studies.durability.experiment import DurabilitySpec
        from labkit.studies.durability.trials import trial_run

        trial = yield from trial_run(DurabilitySpec("linear", "exit"), out, None, None)
        error_type, _, message = (trial.recovery_error or "").partition(": ")
        return {
            "raised": {"type": error_type, "message": message, "module": "langgraph.errors"},
            "outcome": {"checkpoints_at_kill": trial.checkpoints},
            "warnings": [],
        }
    run_dir = new_run_dir(out, prefix=f"pitfall-{name}-")

    def worker(role: str, entry: str, **plan: object) -> WorkerProcess:
        return WorkerProcess(
            run_dir,
            role,
            f"labkit.studies.durability.pitfalls:{entry}",
            {},
            start_mode="fork",
            timeout=30,
            **plan,
        )

    if name == "database_is_locked":
        with worker("holder", "hold_write_lock", pause_at=("holding_lock",)) as holder:
            yield holder  # paused with the lock held (or ended: the second runs anyway)
            with worker("second", "write_while_locked") as second:
                yield from until_ended(second)
        role = "second"
    else:
        entry = "timed_modes" if name == "mistyped_durability" else name
        with worker("pitfall", entry) as single:
            yield from until_ended(single)
        role = "pitfall"
    return read_report(run_dir, role)


def run_pitfall(name: str) -> dict:
    """Reproduce one of PITFALLS live; return {"raised", "outcome", "warnings"} as it happened."""
    check_choice("pitfall", name, PITFALLS)
    return server.call("labkit.studies.durability.pitfalls:run_here", name=name)


def run_pitfalls(progress: Callable[[int, int, None], None] | None = None) -> dict:
    """Every one of PITFALLS, in one call (`run_all_here`): {name: report}, in PITFALLS' order;
    `progress(done, total, None)` as each has run."""
    check_function("progress", progress)
    return server.call("labkit.studies.durability.pitfalls:run_all_here", progress)
