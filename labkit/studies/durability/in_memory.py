"""Study 004's aside, run: an in-memory checkpointer (InMemorySaver) loses every checkpoint
when its process goes. "When the process restarts, all checkpoints are lost" (LangGraph's
persistence docs, quoted by the study), shown with one SIGKILL and one restart.

Process 1 runs the linear graph on an InMemorySaver with durability="sync" and counts the
checkpoints it holds when node c starts; it is killed there. Process 2, as a restarted service
would, makes its own InMemorySaver, counts again, and calls `invoke(None)`. The kernel asks the
trial server (`run_in_memory_restart`); the worker entries import LangGraph only when they run.
"""

from __future__ import annotations

from labkit.bench import server
from labkit.bench.failures import first_failure
from labkit.bench.folders import keep_json, new_run_dir
from labkit.bench.launcher import WorkerProcess, read_report

__all__ = ["run_in_memory_restart"]

KILL_POINT = "inside:c"


def in_memory_graph(job: dict, inside: object = None) -> tuple:
    """The linear graph on a new InMemorySaver of this process, and that saver."""
    from langgraph.checkpoint.memory import InMemorySaver

    from labkit.bench.checkpoints import with_saver
    from labkit.bench.ledger import Ledger
    from labkit.studies.durability.graphs import SHAPES, RunContext

    saver = InMemorySaver()
    hooks = (
        RunContext(Ledger(job["run_dir"]), inside) if inside else RunContext(Ledger(job["run_dir"]))
    )
    return with_saver(SHAPES["linear"], saver), saver, hooks


def first_run(job: dict) -> None:
    """Run until c starts; report the checkpoints held in memory; wait there for the SIGKILL."""
    from labkit.bench.gate import Gate, report
    from labkit.bench.trace import Trace
    from labkit.studies.durability.graphs import CONFIG

    gate = Gate(Trace(job["run_dir"], job["role"]), job)

    def inside(node: str) -> None:
        if node == "c":
            report(job, checkpoints=len(list(saver.list(CONFIG))))
            gate(KILL_POINT)

    graph, saver, hooks = in_memory_graph(job, inside)
    graph.invoke({"log": []}, CONFIG, durability="sync", context=hooks)


def restarted(job: dict) -> None:
    """A new process, a new InMemorySaver: count what it holds, then try to resume."""
    from langgraph.errors import EmptyInputError

    from labkit.bench.gate import report
    from labkit.studies.durability.graphs import CONFIG

    graph, saver, hooks = in_memory_graph(job)
    found = len(list(saver.list(CONFIG)))
    try:
        graph.invoke(None, CONFIG, durability="sync", context=hooks)
    except EmptyInputError as error:
        report(job, checkpoints=found, resumed=False, error=f"{type(error).__name__}: {error}")
    else:
        report(job, checkpoints=found, resumed=True, error=None)


def run_here(out: str | None = None) -> dict:
    """In the trial server: the two processes, one after the other; what each found."""
    run_dir = new_run_dir(out, prefix="in-memory-")
    entry = "labkit.studies.durability.in_memory:"
    with WorkerProcess(
        run_dir, "first", entry + "first_run", {}, start_mode="fork", pause_at=(KILL_POINT,)
    ) as first:
        first.finish(kill_at=KILL_POINT)
    with WorkerProcess(run_dir, "restart", entry + "restarted", {}, start_mode="fork") as second:
        second.wait()
    before, after = read_report(run_dir, "first"), read_report(run_dir, "restart")
    result = {
        "checkpoints_before_kill": before.get("checkpoints"),
        "first_exit": first.proc.returncode,
        "checkpoints_after_restart": after.get("checkpoints"),
        "resumed": after.get("resumed"),
        "recovery_error": after.get("error"),
        "failure": first_failure([(first.report(), KILL_POINT), (second.report(), None)]),
        "run_dir": str(run_dir),
    }
    keep_json(run_dir, results=result)
    return result


def run_in_memory_restart() -> dict:
    """One run on an InMemorySaver killed inside c, then a restart: the checkpoints held before
    the kill, those found after it (none), and what `invoke(None)` said."""
    return server.call("labkit.studies.durability.in_memory:run_here")
