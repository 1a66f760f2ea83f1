"""Time travel runs the later nodes again, and their side effects with them (lesson 4's last
part). Study 000 quotes LangGraph's docs: replaying from an earlier checkpoint re-executes the
nodes after it.

Study 004's linear graph a → b → c → d, on a SqliteSaver file (or lesson 7's PostgresSaver),
with `durability="sync"`. Each
node run writes its ledger lines and asks the ticket service (`bench.tickets`) for a ticket:
the side effect. Three workers, one after the other, each a fresh process on the same files:
`first` runs the graph from its input; `replay` reads `get_state_history`, picks the
checkpoint taken before b and calls `invoke(None, config)` with its `checkpoint_id`; `fork`
edits that checkpoint with `update_state` and runs the fork. The ticket's key is a new UUID per
node run (`fresh`), or stable per (thread, node) (`stable`): the ticket service returns the
original ticket for a key it holds, so a replayed node makes no second one.

The kernel asks the trial server (`run_time_travel`); the worker entries import LangGraph only
when they run, in workers forked from the server.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from pathlib import Path

from labkit.bench import server
from labkit.bench.errors import check_choice
from labkit.bench.failures import first_failure
from labkit.bench.folders import keep_json, new_run_dir
from labkit.bench.launcher import WorkerProcess, read_report
from labkit.bench.ledger import read_ledger
from labkit.bench.tickets import Tickets

__all__ = ["CHECKPOINTERS", "KEYS", "NODES", "PHASES", "run_time_travel"]

CHECKPOINTERS = ("sqlite", "postgres")  # the run's SQLite file, or a schema of its own
KEYS = ("fresh", "stable")  # a new UUID per node run, or one key per (thread, node)
PHASES = ("first", "replay", "fork")  # the three workers, in the order they run
NODES = ("a", "b", "c", "d")  # study 004's linear graph
FROM_BEFORE = "b"  # replay and fork start at the checkpoint whose next node is b
THREAD = "time-travel"


def ticket_key(key: str, node: str) -> str:
    """The ticket's operation key: new at every node run, or the same for (thread, node)."""
    return f"{THREAD}:{node}" if key == "stable" else str(uuid.uuid4())


def linear_graph(job: dict) -> tuple:
    """The linear graph on this process's saver, and the context whose `inside` hook asks the
    ticket service for a ticket in every node run."""
    from labkit.bench.checkpoints import open_checkpointer, with_saver
    from labkit.bench.ledger import Ledger
    from labkit.studies.durability.graphs import SHAPES, RunContext

    tickets = Tickets(job["run_dir"])

    def effect(node: str) -> None:
        tickets.create(THREAD, ticket_key(job["key"], node), node)

    graph = with_saver(SHAPES["linear"], open_checkpointer(job))
    return graph, RunContext(Ledger(job["run_dir"]), inside=effect)


def earlier_checkpoint(graph: object, config: dict) -> dict:
    """The config of the checkpoint taken before b ran, found in `get_state_history` (newest
    first): the one whose next node is b."""
    history = list(graph.get_state_history(config))
    before_b = next(state for state in history if state.next == (FROM_BEFORE,))
    return before_b.config


def first(job: dict) -> None:
    """Run the graph from its input, saving every super-step."""
    from labkit.bench.gate import report

    graph, context = linear_graph(job)
    config = {"configurable": {"thread_id": THREAD}}
    result = graph.invoke({"log": []}, config, durability="sync", context=context)
    report(job, log=result["log"], checkpoints=len(list(graph.get_state_history(config))))


def replay(job: dict) -> None:
    """Replay from the checkpoint before b: `invoke(None)` with its checkpoint_id."""
    from labkit.bench.gate import report

    graph, context = linear_graph(job)
    earlier = earlier_checkpoint(graph, {"configurable": {"thread_id": THREAD}})
    result = graph.invoke(None, earlier, durability="sync", context=context)
    report(job, checkpoint_id=earlier["configurable"]["checkpoint_id"], log=result["log"])


def fork(job: dict) -> None:
    """Fork from the checkpoint before b: `update_state` writes an edited copy of it (a new
    checkpoint, its parent the old one), and `invoke(None)` runs on from the copy."""
    from labkit.bench.gate import report

    graph, context = linear_graph(job)
    earlier = earlier_checkpoint(graph, {"configurable": {"thread_id": THREAD}})
    forked = graph.update_state(earlier, {"log": ["edited"]})
    result = graph.invoke(None, forked, durability="sync", context=context)
    report(job, checkpoint_id=forked["configurable"]["checkpoint_id"], log=result["log"])


def counts(run_dir: Path) -> dict:
    """Per node: how many times it started (the ledger), how many tickets it holds."""
    starts = Counter(line["node"] for line in read_ledger(run_dir) if line["phase"] == "start")
    tickets = Tickets(run_dir)
    try:
        held = Counter(json.loads(payload)["title"] for *_, payload in tickets.rows())
    finally:
        tickets.close()
    return {node: {"runs": starts[node], "effects": held[node]} for node in NODES}


def run_here(key: str, checkpointer: str, out: str | None = None) -> dict:
    """In the trial server: the three workers one after the other; per node, the runs and the
    tickets after each. On Postgres, a new schema on labkit's own server holds the thread."""
    from labkit.studies.durability.trials import saver_schema

    run_dir = new_run_dir(out, prefix="time-travel-")
    saver = saver_schema(run_dir, None) if checkpointer == "postgres" else {}
    job = {"key": key, "checkpointer": checkpointer, **saver}
    after, workers = {}, []
    for phase in PHASES:
        entry = f"labkit.studies.durability.time_travel:{phase}"
        with WorkerProcess(run_dir, phase, entry, job, start_mode="fork") as worker:
            worker.wait()
        workers.append((worker.report(), None))
        after[phase] = counts(run_dir)
    result = {
        "key": key,
        "checkpointer": checkpointer,
        "after": after,
        "reports": {phase: read_report(run_dir, phase) for phase in PHASES},
        "failure": first_failure(workers),
        "run_dir": str(run_dir),
    }
    keep_json(run_dir, results=result)
    return result


def run_time_travel(key: str, checkpointer: str = "sqlite") -> dict:
    """The graph run once, replayed from the checkpoint before b, then forked from it; per
    node (`result["after"][phase][node]`), its runs and tickets after each, with a `fresh` key
    per node run or a `stable` one per (thread, node), on a SqliteSaver or a PostgresSaver."""
    check_choice("key", key, KEYS)
    check_choice("checkpointer", checkpointer, CHECKPOINTERS)
    entry = "labkit.studies.durability.time_travel:run_here"
    return server.call(entry, key=key, checkpointer=checkpointer)
