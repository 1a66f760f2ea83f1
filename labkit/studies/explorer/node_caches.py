"""LangGraph's node cache in a SQLite file (`compile(cache=SqliteCache(path="cache.db"))`):
LangGraph's own memo of what a node returned, no effect of the reader's code. A crash after
the node's writes are saved, before the cache's commit, leaves no entry, and the recovery,
which resumes after the node, never makes one: judged as an effect, a right graph came out
red. So no checker sees it. The crash states keep it all the same: what it holds decides
whether a recovery runs a node again. Known by its one table, as LangGraph makes it.
Worker-side: standard library only.
"""

from __future__ import annotations

import glob
import os

__all__ = ["node_caches", "unjudged"]

CACHE_TABLE = "cache"
CACHE_COLUMNS = ["ns", "key", "expiry", "encoding", "val"]  # langgraph.cache.sqlite's


def node_caches(run_dir: str, state: dict) -> list[str]:
    """The files of `state` (read from `run_dir`) that hold LangGraph's node cache and nothing
    else, by their paths in the run folder."""
    return [
        name
        for name, held in state.items()
        if isinstance(held, dict)  # a SQLite file's tables
        and list(held) == [CACHE_TABLE]
        and columns(os.path.join(run_dir, name)) == CACHE_COLUMNS
    ]


def columns(path: str) -> list[str]:
    """The names of the cache table's columns in the SQLite file at `path`, in order; none
    where `path` is no SQLite file (a state's Postgres schema has tables too, and no file,
    which a connection would make)."""
    # here: the kernel imports this module for `unjudged` (the report's), and the worker's
    # states module with it would bring the watches' machinery there
    from labkit.studies.explorer.states import REAL_CONNECT, is_database  # unwatched

    if not is_database(path):
        return []
    db = REAL_CONNECT(path, isolation_level=None)
    try:
        return [row[1] for row in db.execute(f"PRAGMA table_info({CACHE_TABLE})")]
    finally:
        db.close()


def unjudged(names: list[str]) -> list[str]:
    """`names` as patterns of files no checker sees (`ignore_files`'), each matching itself only
    (a name with `[` or `*` in it too)."""
    return [glob.escape(name) for name in names]
