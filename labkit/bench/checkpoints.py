"""A worker's own LangGraph checkpointer on a run's checkpoint file, and reading it back.

Every LangGraph study runs its graphs in workers forked from the trial server; each worker
opens its own SqliteSaver on the run's `checkpoints.db` after the fork (`open_saver`) and puts
it under a graph compiled once, before any fork (`with_saver`). `checkpoint_report` decodes
the file through LangGraph's own API for the views. Imports LangGraph: only the trial server
and its workers import this module, never the kernel.
"""

from __future__ import annotations

import os
import sqlite3
import time

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph.state import CompiledStateGraph

__all__ = [
    "CHECKPOINT_FILE",
    "SlowSqliteSaver",
    "checkpoint_report",
    "has_table",
    "open_saver",
    "with_saver",
]

CHECKPOINT_FILE = "checkpoints.db"


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
