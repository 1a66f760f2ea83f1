"""A graph compiled with LangGraph's Postgres savers, explored (issue 25, item 12): given a
server, on a PostgresSaver in each run's own schema, whose checkpoint commits are Postgres's
and crash points; without one, on SQLite, and the report says so in one line, never silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from labkit.language import set_language
from labkit.studies.explorer.replay import explore
from labkit.studies.explorer.states import CHECKPOINT_FILE
from tests.test_postgres import own_server  # noqa: F401 - the module's server, a fixture

SAVERS = Path(__file__).parent / "outside" / "postgres_saver.py"
GRAPHS = {"graph": "PostgresSaver", "async_graph": "AsyncPostgresSaver"}


def failing(found) -> dict:
    return {(p.op, p.detail, p.where): p.outcome for p in found.failing}


@pytest.mark.parametrize("graph", GRAPHS)
def test_a_graph_on_a_postgres_saver_is_explored_on_postgres_in_the_runs_schema(
    own_server,  # noqa: F811 - the fixture imported above
    graph,
):
    """Its puts are crash points, no `checkpoints.db` is made anywhere, and a crash after the
    charge's saved writes recovers from Postgres without charging again."""
    found = explore(f"{SAVERS}:{graph}", "graph", restart_at="now", postgres=own_server.url)
    assert found.replaced is None and "SQLite" not in found.summary(), found.summary()
    ops = [p.op for p in found.points if p.n is not None]
    assert ops.count("put") == 4 and ops.count("put_writes") == 3, found.summary()
    assert failing(found) == {("commit", "orders.db", "postgres_saver.py:30"): "duplicate"}
    [charged] = [p for p in found.points if p.detail == "writes of node charge"]
    assert charged.outcome == "consistent"
    assert not list(Path(found.folder).glob(f"**/{CHECKPOINT_FILE}")), found.folder


@pytest.mark.parametrize("graph", GRAPHS)
def test_without_a_server_a_postgres_saver_is_explored_on_sqlite_and_the_report_says_so(
    graph, chinese
):
    found = explore(f"{SAVERS}:{graph}", "graph", restart_at="now")
    assert found.replaced == {"saver": GRAPHS[graph], "postgres": True}
    assert f"{GRAPHS[graph]} 改用 SQLite 探索" in found.summary(), found.summary()
    set_language("en")
    assert f"{GRAPHS[graph]}, was explored on SQLite instead" in found.summary()
    assert (Path(found.folder) / "record" / CHECKPOINT_FILE).is_file()
    assert failing(found) == {("commit", "orders.db", "postgres_saver.py:30"): "duplicate"}
