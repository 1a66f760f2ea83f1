"""The crash explorer on graph shapes real LangGraph users write that the lab had not tried
(tests/outside/shapes/): each test asserts the true matrix, worked out by hand, and failed on
the code before its fix."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from labkit.bench.errors import LabError
from labkit.language import set_language
from labkit.studies.explorer.replay import explore

SHAPES = Path(__file__).parent / "outside" / "shapes"


def shape(module: str, name: str, **options: object):
    return explore(f"{SHAPES / module}.py:{name}", "graph", restart_at="now", **options)


@pytest.mark.parametrize("name", ["thread", "pooled"])
def test_a_mail_a_node_hands_to_a_thread_is_sent_and_a_crash_before_it_loses_it(name):
    """The node returns before its thread writes the line. The run without a crash ends as a
    Python program does, once its threads are done: the line is there. A crash after the
    node's writes are saved, before the line, loses it (the recovery never runs the node
    again); before then, the recovery sends it. Before the fix the worker ended without
    waiting: no line anywhere, and the matrix was green."""
    found = shape("mail_thread", name)
    assert found.clean["outbox.txt"] == ["receipt o-2"], found.summary()
    outcomes = {p.detail: p.outcome for p in found.points if p.op == "put_writes"}
    node = "mail" if name == "thread" else "mail_pooled"
    assert outcomes[f"writes of node {node}"] == "lost", found.summary()
    assert outcomes["writes of node __start__"] == "consistent", found.summary()
    assert not found.green and {p.outcome for p in found.failing} == {"lost"}, found.summary()


def test_a_line_left_in_a_files_buffer_reaches_it_at_the_end_and_a_crash_before_loses_it():
    """The audit file is opened at import and never flushed: the run without a crash ends
    as a Python program does, its open files closed, so the line is there (a crash point of
    its own, the last). Any kill from the charge's saved writes to that point loses it: the
    buffer dies with the process, and the recovery never runs the charge again. Before the
    fix the worker ended without a flush: an empty audit file everywhere, and green."""
    found = shape("audit_at_import", "graph")
    assert found.clean["audit.txt"] == ["charged o-1"], found.summary()
    outcomes = [(p.op, p.detail, p.outcome) for p in found.points if p.n is not None]
    saved = outcomes.index(("put_writes", "writes of node charge", "lost"))
    assert outcomes[-1] == ("write", "audit.txt", "consistent"), found.summary()
    assert {outcome for _, _, outcome in outcomes[saved:-1]} == {"lost"}, found.summary()
    assert {outcome for _, _, outcome in outcomes[:saved]} == {"consistent"}, found.summary()


@pytest.mark.parametrize(
    ("module", "name", "running"),
    [
        ("mail_thread", "daemon", "send_receipt (mail_thread.py:{line})"),
        ("mail_task", "graph", "send_receipt (mail_task.py:{line})"),
    ],
)
def test_work_still_running_when_the_run_ends_is_never_green(module, name, running):
    """A daemon thread, or a task no one awaits: a Python program's end leaves the one and
    cancels the other, a server runs both, and the mail is sent after the run. No crash state
    holds what it does next: the matrix names it, at the line where it waits, and is never
    green. The library's daemon thread beside it runs no code of the app's: not named.
    Before the fix both were explored green, with no mail anywhere."""
    found = shape(module, name)
    lines = (SHAPES / f"{module}.py").read_text().splitlines()
    line = next(
        n
        for n, text in enumerate(lines, 1)
        if "await asyncio.sleep" in text or "time.sleep(0.3)" in text
    )
    assert found.unwatched == [
        {"reason": "running", "files": [running.format(line=line)], "commits": None}
    ], found.summary()
    assert not found.green


@pytest.mark.parametrize("name", ["make_graph", "make_graph_untyped", "graph_in_context"])
def test_a_factory_langgraph_json_may_name_makes_the_graph_explored(name):
    """A factory of the run's config, or a `with` factory, makes the graph, and its matrix is
    the graph's own: the charge without a key is charged twice. Before, only a factory of no
    arguments was called; these were refused as "of type 'function'"."""
    found = shape("factories", name)
    assert found.clean["shop.db"] == {"charges": [["o-3"]]}, found.summary()
    assert not found.green and {p.outcome for p in found.failing} == {"duplicate"}, found.summary()


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("make_graph_async", "makes its graph asynchronously (an async function or context"),
        ("graph_in_async_context", "makes its graph asynchronously (an async function or"),
        ("charge_node", "is not a LangGraph graph, nor a function of no arguments or of a config"),
    ],
)
def test_an_async_factory_or_a_node_is_refused_in_one_line(name, said):
    with pytest.raises(LabError, match=re.escape(said)):
        shape("factories", name)


def test_langgraphs_node_cache_in_sqlite_is_no_effect_and_stays_in_the_crash_states():
    """A crash after the cached node's writes are saved, before the cache's commit, leaves no
    entry, and the recovery, resuming after the node, never makes one: judged as an effect,
    the cache made this right graph red (3 rows "lost"). It is LangGraph's own: no checker sees
    it, the summary says so, and its commits are still crash points of their own."""
    found = shape("node_cache", "graph")
    assert found.green and found.node_caches == ["cache.db"], found.summary()
    assert ("commit", "cache.db") in {(p.op, p.detail) for p in found.points}, found.summary()
    assert found.summary().endswith(
        "no checker saw cache.db: LangGraph's node cache (SqliteCache), no effect of your code"
    ), found.summary()
    set_language("zh")
    try:
        said = found.summary()
    finally:
        set_language("en")
    assert said.endswith(
        "；检查器没有看 cache.db：它是 LangGraph 的节点缓存（SqliteCache），不是你的代码的效果"
    ), said


@pytest.mark.parametrize(("name", "file"), [("twice", "bookings.db"), ("own_cache", "memo.db")])
def test_an_effect_beside_the_node_cache_or_in_a_table_of_its_name_is_still_judged(name, file):
    """A row written once a run is doubled by a recovery that runs its node again (killed after
    its commit, before its writes are saved), cache or not: the reader's own table named
    `cache`, of another shape, is an effect of theirs like the bookings. (LangGraph commits
    its cache from a thread of its own: where that commit falls after the booking's, a kill
    there doubles the booking too.)"""
    found = shape("node_cache", name)
    failing = {(p.op, p.detail, p.outcome) for p in found.failing}
    assert ("commit", file, "duplicate") in failing, found.summary()
    assert {outcome for _, _, outcome in failing} == {"duplicate"}, found.summary()
    assert file not in found.node_caches, found.summary()


def test_a_postgres_schema_whose_one_table_is_named_cache_is_no_node_cache_and_makes_no_file(
    tmp_path,
):
    """A state's Postgres schema is an entry of tables too ("postgres shop"), with no file
    behind it: looking for LangGraph's cache there must not open a SQLite file by its name."""
    from labkit.studies.explorer.node_caches import node_caches

    assert node_caches(str(tmp_path), {"postgres shop": {"cache": [["a", 1]]}}) == []
    assert list(tmp_path.iterdir()) == []
