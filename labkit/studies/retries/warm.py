"""Lesson 8's graphs, made ready in the trial server before it forks (its PRELOAD names
`warm_up`): the modules compile their graphs as they load, and one first-checkpoint run sets
up LangGraph's machinery, so every forked worker finds it done. Imports LangGraph.
"""

from __future__ import annotations

from labkit.bench.checkpoints import open_saver, with_saver
from labkit.bench.folders import scratch_run_dir
from labkit.bench.ledger import Ledger
from labkit.studies.retries import drain, first_checkpoint, functional, handlers, payments

__all__ = ["warm_up"]

LOADED = (drain, functional, handlers, payments)  # imported for their compiled graphs


def warm_up() -> None:
    """One clean run of the first-checkpoint graph in a throwaway folder; nothing of it (no
    connection, no file) is left for the workers to inherit."""
    with scratch_run_dir(prefix="warm-up-") as folder:
        saver, ledger = open_saver(folder), Ledger(folder)
        try:
            with_saver(first_checkpoint.SHAPE, saver).invoke(
                {"log": []},
                first_checkpoint.CONFIG,
                durability="sync",
                context=first_checkpoint.Trial(crash=False, ledger=ledger),
            )
        finally:
            saver.conn.close()
            ledger.close()
