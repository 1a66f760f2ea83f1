"""The checkpointer a graph is explored on, whose every `put` and `put_writes` is a crash point.

A graph runs on a saver of the run's own: a SqliteSaver on `states.CHECKPOINT_FILE`
(`RecordedSaver`), or, where the reader's graph is compiled with a Postgres saver
(PostgresSaver, AsyncPostgresSaver) and the exploration has a server, a PostgresSaver in the
run's own schema (`postgres_saver`): its checkpoint commits are then Postgres commits. Any other
saver of the reader's (a Postgres one without a server, Redis, ...) is explored on SQLite
instead, and the trace says so (`note_replaced`): the report names it, never silently. Imports
LangGraph: only the trial server and its workers.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from labkit.studies.explorer.postgres_runs import postgres_run
from labkit.studies.explorer.record import CrashPoints
from labkit.studies.explorer.states import CHECKPOINT_FILE

__all__ = ["Recorded", "RecordedSaver", "note_replaced", "open_saver"]

PUSH = "~__pregel_push"  # the path of a task started by a call (a @task) or a Send
SQLITE_SAVERS = "langgraph.checkpoint.sqlite"  # SqliteSaver's and AsyncSqliteSaver's modules
POSTGRES_SAVERS = "langgraph.checkpoint.postgres"  # PostgresSaver's, AsyncPostgresSaver's...


class Recorded:
    """A saver with a crash point after each checkpoint and each task's writes it saves (put
    before the saver's class in the bases: its `put` is called through this one)."""

    points: CrashPoints | None = None
    nodes: dict[str, str] = {}  # node name -> where its function is (file:line)
    tasks: dict[str, tuple[str, str | None]] = {}  # task id -> its name, where its function is

    def put(self, config, checkpoint, metadata, new_versions):  # noqa: ANN001, ANN201 - LangGraph's
        saved = super().put(config, checkpoint, metadata, new_versions)
        if self.points is not None:
            step, source = metadata.get("step"), metadata.get("source")
            said = {"code": "checkpoint", "step": step, "source": source}
            what, said = in_subgraph(f"checkpoint of step {step} ({source})", said, config)
            self.points.hit("put", what, hold=self.lock, said=said)  # no other save lands meanwhile
        return saved

    def put_writes(self, config, writes, task_id, task_path=""):  # noqa: ANN001, ANN201
        super().put_writes(config, writes, task_id, task_path)
        if self.points is not None:
            what, where, said = self.whose(task_id, task_path)
            what, said = in_subgraph(what, said, config)
            self.points.hit("put_writes", what, where, hold=self.lock, said=said)

    # A graph run with `ainvoke` calls these: the same saves, in the event loop's own thread.
    async def aget_tuple(self, config):  # noqa: ANN001, ANN201 - LangGraph's
        return self.get_tuple(config)

    async def alist(self, config, *, filter=None, before=None, limit=None) -> AsyncIterator:  # noqa: A002, ANN001
        for item in self.list(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(self, config, checkpoint, metadata, new_versions):  # noqa: ANN001, ANN201
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config, writes, task_id, task_path=""):  # noqa: ANN001, ANN201
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id):  # noqa: ANN001, ANN201
        self.delete_thread(thread_id)

    def whose(self, task_id: str, task_path: str) -> tuple[str, str | None, dict]:
        """Whose writes these are, in words and as a code, and where its function is: a
        node's, a @task's (by the name the loop knew it by: its path holds only numbers), the
        resume answer's."""
        name, where = self.tasks.get(task_id, (task_path.rpartition(", ")[2], None))
        if task_path.startswith(PUSH) and name not in self.nodes:
            return f"writes of task {name}", where, {"code": "task_writes", "name": name}
        if name:  # a subgraph's node is no node of the graph: where its task's function is
            inner = None if name.startswith("__") else where  # __start__: LangGraph's, not theirs
            return (
                f"writes of node {name}",
                self.nodes.get(name) or inner,
                {"code": "node_writes", "name": name},
            )
        return "writes of the resume answer", None, {"code": "resume_writes"}


def in_subgraph(what: str, said: dict, config: dict) -> tuple[str, dict]:
    """A save of a subgraph's (its config's `checkpoint_ns` is not empty: "hotel:<id>", or
    "outer:<id>|inner:<id>" nested) says which: the namespace's node names, outermost first,
    in words and as the code's `ns` field; the graph's own saves are left as they are."""
    namespace = (config or {}).get("configurable", {}).get("checkpoint_ns", "")
    if not namespace:
        return what, said
    ns = "/".join(part.partition(":")[0] for part in namespace.split("|"))
    return f"{what} in subgraph {ns}", {**said, "ns": ns}


class RecordedSaver(Recorded, SqliteSaver):
    """A SqliteSaver on the run's `CHECKPOINT_FILE`, its saves crash points."""


def open_saver(job: dict, readers: object = None) -> Recorded:
    """The run's saver, opened in this process: a PostgresSaver in the run's schema for a
    reader's Postgres saver (`readers`) where the exploration has a server, else SQLite."""
    if is_postgres(readers) and postgres_run(job):
        from labkit.studies.explorer.postgres_saver import open_postgres_saver

        return open_postgres_saver(job)
    import sqlite3  # after the commit watch: the saver's statements show the nodes' commits

    conn = sqlite3.connect(
        os.path.join(job["run_dir"], CHECKPOINT_FILE), timeout=5.0, check_same_thread=False
    )
    return RecordedSaver(conn)


def is_postgres(saver: object) -> bool:
    return isinstance(saver, BaseCheckpointSaver) and type(saver).__module__.startswith(
        POSTGRES_SAVERS
    )


def note_replaced(readers: object, opened: Recorded, trace: object) -> None:
    """Into the trace, if the reader's graph was compiled with a saver that `opened` (SQLite)
    stands in for: its class name, and whether it is a Postgres saver (a server would have
    explored it as it is)."""
    if not isinstance(readers, BaseCheckpointSaver) or not isinstance(opened, RecordedSaver):
        return
    if not type(readers).__module__.startswith(SQLITE_SAVERS):
        trace.note("replaced", saver=type(readers).__name__, postgres=is_postgres(readers))
