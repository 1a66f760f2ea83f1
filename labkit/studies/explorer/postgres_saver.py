"""A graph compiled with a Postgres saver, explored on a PostgresSaver in the run's own schema
(`postgres_runs`): its tables made by its own `setup()` (set-up, no crash point), every `put`
and `put_writes` a crash point after its commit (`savers.Recorded`), as a SqliteSaver's are. Its
connection is marked (`SAVER_MARK`), so that the watch of the nodes' Postgres writes does not
count its commits a second time. Imported only where such a graph is explored with a server.
"""

from __future__ import annotations

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row

from labkit.studies.explorer.postgres_runs import JOB_KEY, run_options
from labkit.studies.explorer.postgres_writes import SAVER_MARK
from labkit.studies.explorer.savers import Recorded

__all__ = ["RecordedPostgresSaver", "open_postgres_saver"]


class RecordedPostgresSaver(Recorded, PostgresSaver):
    """A PostgresSaver in the run's schema, its saves crash points."""


def open_postgres_saver(job: dict) -> RecordedPostgresSaver:
    """This process's own connection to the run's schema (autocommit and dict rows, as
    PostgresSaver asks of a connection it is given), and the saver's tables in it."""
    conn = psycopg.connect(
        job[JOB_KEY]["url"],
        autocommit=True,
        prepare_threshold=0,
        row_factory=dict_row,
        options=f"{run_options(job)} -c {SAVER_MARK}",
    )
    saver = RecordedPostgresSaver(conn)
    saver.setup()
    return saver
