"""A worker's own LangGraph checkpointer on a run's checkpoint file, and reading it back.

Every LangGraph study runs its graphs in workers forked from the trial server; each worker
opens its own SqliteSaver on the run's `checkpoints.db` after the fork (`open_saver`) and puts
it under a graph compiled once, before any fork (`with_saver`). `checkpoint_report` decodes
the file through LangGraph's own API for the views. `open_checkpointer` opens the job's
choice instead, the run's SQLite file or a PostgresSaver on the run's schema (lesson 7), and
times every put. Imports LangGraph: only the trial server
and its workers import this module, never the kernel. PostgresSaver and psycopg are imported
where a Postgres saver is opened: they come with the lab's extras (`labkit[lab]`), and a
project that installs the explorer alone has neither.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph.state import CompiledStateGraph

from labkit.bench.postgres import connect

__all__ = [
    "CHECKPOINT_FILE",
    "PUTS_FILE",
    "SlowSqliteSaver",
    "checkpoint_report",
    "has_table",
    "open_checkpointer",
    "open_saver",
    "postgres_counts",
    "set_up_postgres",
    "with_saver",
]

CHECKPOINT_FILE = "checkpoints.db"
PUTS_FILE = "puts.jsonl"  # how long each put and put_writes took, one line per call


class SlowSqliteSaver(SqliteSaver):
    """A SqliteSaver whose put() sleeps first: a stand-in for a checkpointer across a network."""

    def __init__(self, conn: sqlite3.Connection, delay_ms: int) -> None:
        super().__init__(conn)
        self.delay_s = delay_ms / 1000

    def put(self, *args, **kwargs):  # the saver's own signature
        time.sleep(self.delay_s)
        return super().put(*args, **kwargs)


def open_saver(run_dir: str, slow_ms: int = 0, timeout: float = 5.0) -> SqliteSaver:
    """This process's own connection to the checkpoint file (opened after the fork); `timeout`
    is how long SQLite waits for another writer's lock before `database is locked`."""
    path = os.path.join(run_dir, CHECKPOINT_FILE)
    conn = sqlite3.connect(path, timeout=timeout, check_same_thread=False)
    return SlowSqliteSaver(conn, slow_ms) if slow_ms else SqliteSaver(conn)


def open_checkpointer(
    job: dict, on_put: Callable[[dict], None] | None = None
) -> BaseCheckpointSaver:
    """The job's checkpointer, opened in this process: the run's SQLite file, or a
    PostgresSaver on the run's schema (`job["postgres_url"]`, `job["schema"]`). Either way every
    put() waits `job["slow_ms"]` first (study 004's stand-in for a network) and every
    put_writes() `job["writes_delay_ms"]` (issue #8039's race), every put() first calls
    `on_put(metadata)` (a kill point), and both are timed into puts.jsonl."""
    if job.get("checkpointer", "sqlite") == "postgres":
        saver: BaseCheckpointSaver = postgres_saver(job["postgres_url"], job["schema"])
    else:
        saver = open_saver(job["run_dir"])
    return timed(saver, job, on_put)


def timed(
    saver: BaseCheckpointSaver, job: dict, on_put: Callable[[dict], None] | None
) -> BaseCheckpointSaver:
    """Delay and time the saver's put and put_writes (instance attributes shadow its
    methods), each line written after the call, so that the time taken to record it is not
    counted. A plain write, not fsynced: a SIGKILL loses nothing written, and a put must not
    wait for a disk."""
    out = os.open(os.path.join(job["run_dir"], PUTS_FILE), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    delays = {
        "put": job.get("slow_ms", 0) / 1000,
        "put_writes": job.get("writes_delay_ms", 0) / 1000,
    }
    for name in ("put", "put_writes"):
        call = getattr(saver, name)

        def timed_call(*args, _call=call, _name=name, **kwargs):  # the saver's own signature
            if _name == "put" and on_put:
                on_put(args[2] if len(args) > 2 else kwargs["metadata"])
            started = time.perf_counter_ns()
            if delays[_name]:
                time.sleep(delays[_name])
            try:
                return _call(*args, **kwargs)
            finally:
                ms = (time.perf_counter_ns() - started) / 1e6
                line = {"call": _name, "ms": round(ms, 3), "role": job["role"]}
                os.write(out, (json.dumps(line) + "\n").encode())

        setattr(saver, name, timed_call)
    return saver


def postgres_saver(url: str, schema: str) -> BaseCheckpointSaver:
    """A PostgresSaver on its own connection to the run's schema (the trial server has
    imported it already, where the lab's extras are installed: `server.PRELOAD`)."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    return PostgresSaver(connect(url, schema, prepare_threshold=0, row_factory=dict_row))


def set_up_postgres(url: str, schema: str) -> None:
    """PostgresSaver's tables in the run's schema (its migrations, once, before any worker)."""
    saver = postgres_saver(url, schema)
    with saver.conn:
        saver.setup()


def postgres_counts(postgres_url: str, schema: str, thread_id: str) -> tuple[int, int, int]:
    """(checkpoints, writes, writes of unsaved checkpoints) of one thread in the run's schema,
    as committed."""
    with connect(postgres_url, schema) as conn:
        return conn.execute(
            "SELECT (SELECT count(*) FROM checkpoints WHERE thread_id = %(t)s),"
            " (SELECT count(*) FROM checkpoint_writes WHERE thread_id = %(t)s),"
            " (SELECT count(*) FROM checkpoint_writes w WHERE thread_id = %(t)s AND NOT EXISTS"
            "  (SELECT 1 FROM checkpoints c WHERE c.thread_id = w.thread_id AND"
            "  c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id))",
            {"t": thread_id},
        ).fetchone()


def with_saver(shape: CompiledStateGraph, saver: BaseCheckpointSaver) -> CompiledStateGraph:
    """A graph compiled once (without a checkpointer), on this process's own checkpointer."""
    return shape.copy({"checkpointer": saver})


def checkpoint_report(graph: CompiledStateGraph, saver: SqliteSaver, config: dict) -> dict:
    """A thread's checkpoints (from `get_state_history`) and `writes` rows (decoded with the
    saver's own serializer). Writes whose checkpoint was never saved are flagged: recovery
    ignores them."""
    checkpoints = [
        {
            "checkpoint_id": snap.config["configurable"]["checkpoint_id"],
            "step": snap.metadata.get("step"),
            "source": snap.metadata.get("source"),
            "next": list(snap.next),
            "interrupts": [repr(i.value) for task in snap.tasks for i in task.interrupts],
        }
        for snap in graph.get_state_history(config)
    ]
    saved = {c["checkpoint_id"] for c in checkpoints}
    rows = (
        saver.conn.execute(
            "SELECT checkpoint_id, task_id, idx, channel, type, value FROM writes ORDER BY rowid"
        ).fetchall()
        if has_table(saver.conn, "writes")
        else []
    )
    writes = [
        {
            "checkpoint_id": cid,
            "task_id": task[:8],
            "idx": idx,
            "channel": channel,
            "value": repr(saver.serde.loads_typed((kind, value))),
            "checkpoint_saved": cid in saved,
        }
        for cid, task, idx, channel, kind, value in rows
    ]
    return {"checkpoints": checkpoints, "writes": writes}


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    query = "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?"
    return conn.execute(query, (name,)).fetchone() is not None
