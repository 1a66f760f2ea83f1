"""The crash explorer on graphs in the shapes LangGraph's docs and tutorials teach (issue 25:
"a green matrix must be true"), written here as a new user would (tests/outside/shapes/, one
module a shape). Each test asserts the TRUE matrix, decided from first principles: under
durability "sync" a node's (or task's) effect is repeated by a crash after it and before its
writes are saved, an effect that is idempotent (a key, an UPSERT to a value, a file rewritten
whole with the same contents) never is, and a run whose effects the explorer cannot see or
recover is never green. Each exploration recovers at once (`restart_at="now"`): no shape here
depends on the clock.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from labkit.bench.errors import LabError, RunFailed
from labkit.studies.explorer.replay import explore
from labkit.studies.explorer.report import Exploration
from labkit.views.explorer_words import failed_words

SHAPES = Path(__file__).parent / "outside" / "shapes"
APPROVE, AMOUNT = {"action": "approve"}, {"amount": 7}


def target(module: str, name: str) -> str:
    return f"{SHAPES / module}.py:{name}"


def at(module: str, text: str) -> str:
    """`module.py:line` of the first line of the shape that holds `text`: a crash point's
    `where`, found without counting lines by hand."""
    lines = (SHAPES / f"{module}.py").read_text().splitlines()
    return f"{module}.py:{next(i for i, line in enumerate(lines, 1) if text in line)}"


def shape(module: str, name: str, **options: object):
    return explore(target(module, name), "graph", restart_at="now", **options)


def failing(found) -> dict:
    """The failing rows: (what was made durable, the reader's line) -> outcome."""
    return {(p.op, p.detail, p.where): p.outcome for p in found.failing}


def test_two_interrupts_in_one_node_answered_with_dicts_in_order_or_by_payload():
    """Docs, "Interrupts": two `interrupt()`s in one node, each answered with a dict, the
    insert after both. Only a crash after the insert and before the node's writes are saved
    repeats it; every answer saved is a crash point that recovers right. Keyed: green."""
    insert = ("commit", "refunds.db", at("two_questions", "INSERT INTO refunds"))
    for options in (
        {"resumes": [APPROVE, AMOUNT]},
        {"resume_by": target("two_questions", "reviewer")},
    ):
        found = shape("two_questions", "graph", **options)
        assert found.clean["refunds.db"] == {"refunds": [["o-1", 7]]}, found.summary()
        assert failing(found) == {insert: "duplicate"}, found.summary()
        assert sum(p.detail == "writes of the resume answer" for p in found.points) == 2
    assert shape("two_questions", "keyed", resumes=[APPROVE, AMOUNT]).green


def test_an_entrypoint_with_tasks_repeats_its_body_until_its_own_writes_are_saved():
    """Docs, "Functional API": `@entrypoint()` calling two `@task`s. The body's audit line is
    written again by every recovery until the entrypoint's writes are saved; the charge and
    the mail are repeated only before their task's writes are saved."""
    found = shape("functional", "workflow")
    assert found.clean["payments.db"] == {"payments": [["o-2"]]}, found.summary()
    rows = [(p.op, p.detail, p.outcome) for p in found.points if p.n is not None]
    assert rows == [
        ("put", "checkpoint of step -1 (input)", "consistent"),
        ("write", "audit.txt", "consistent"),  # the file made, still empty
        ("write", "audit.txt", "duplicate"),
        ("commit", "payments.db", "duplicate"),  # the table made: the audit line again
        ("commit", "payments.db", "duplicate"),  # the charge: twice, and the audit line
        ("put_writes", "writes of task charge", "duplicate"),  # the audit line only
        ("write", "outbox.txt", "duplicate"),  # the file made: the audit line again
        ("write", "outbox.txt", "duplicate"),
        ("put_writes", "writes of task email", "duplicate"),
        ("put_writes", "writes of node workflow", "consistent"),
        ("put", "checkpoint of step 0 (loop)", "consistent"),
    ], found.summary()
    assert found.point(5).where == at("functional", "INSERT INTO payments")
    with pytest.raises(RunFailed, match="LookupError: no order"):
        shape("raises", "in_task")


@pytest.mark.parametrize(
    ("module", "name", "kept_in"),
    [
        ("functional_memory", "workflow", "InMemorySaver"),
        ("memory_store", "graph", "InMemoryStore"),
        ("saves_nothing", "graph", "checkpointer=False"),
    ],
)
def test_what_lives_in_memory_is_refused_in_one_line_never_explored_green(module, name, kept_in):
    """`@entrypoint(checkpointer=InMemorySaver())` (the docs' quickstart),
    `compile(store=InMemoryStore())` (the docs' long-term memory) and
    `compile(checkpointer=False)` keep nothing across a crash, and the explorer cannot read a
    store: refused, never given a saver and green (checkpointer=False was, before its fix)."""
    with pytest.raises(LabError) as refused:
        shape(module, name)
    assert kept_in in str(refused.value) and "\n" not in str(refused.value)


def test_tools_that_update_rows_fail_only_where_the_update_is_not_idempotent():
    """The tutorial's tool calling, one tool call a turn: setting the seat is idempotent
    (the same row after a re-run), adding miles is not (200 where the clean run left 100)."""
    found = shape("tool_updates", "sequential")
    assert found.clean["airline.db"] == {"tickets": [["t-1", "12A", 100]]}
    miles = ("commit", "airline.db", at("tool_updates", "SET miles = miles"))
    assert failing(found) == {miles: "inconsistent"}, found.summary()


@pytest.mark.parametrize("name", ["graph", "fallback"])
def test_parallel_tool_calls_fail_at_the_update_that_is_not_idempotent_every_time(name):
    """Both tools asked for in one message: a ToolNode (bare, or `.with_fallbacks`) runs them
    in a thread pool. Each row must be judged on the crash state after its own line (the
    seat's row holds the move, and recovers right), the same in every run: before the fix
    the n-th commit was one tool's in one run and the other's in the next, and the miles'
    row came out consistent in about one run of three."""
    seat, miles = at("tool_updates", "SET seat = ?"), at("tool_updates", "SET miles = miles")
    for _ in range(2):
        found = shape("tool_updates", name)
        assert failing(found) == {("commit", "airline.db", miles): "inconsistent"}, found.summary()
        [row] = [p for p in found.points if p.where == seat]
        kept = json.loads(Path(row.run_dir, "recovery.json").read_text())["at_kill"]
        assert kept["airline.db"]["tickets"] == [["t-1", "12A", 0]], (row, kept)


def test_static_breakpoints_before_and_after_nodes_are_gone_past_and_each_effect_found():
    """Docs, "Use breakpoints": `interrupt_after=["draft"]`, `interrupt_before=["send"]`.
    The draft's insert and the outbox line are each repeated by a crash before their node's
    writes are saved; the breakpoints themselves lose nothing."""
    found = shape("breakpoints", "graph")
    assert found.clean["outbox.txt"] == ["to=bo@example.com"], found.summary()
    assert failing(found) == {
        ("commit", "drafts.db", at("breakpoints", "INSERT INTO drafts")): "duplicate",
        ("write", "outbox.txt", at("breakpoints", 'open("outbox.txt"')): "duplicate",
    }, found.summary()


def test_a_node_that_routes_with_command_goto_has_its_effect_found():
    """Docs, "Command": `triage` inserts, then returns `Command(goto="escalate", update=...)`;
    `escalate` pages (a line in a file, the update's value in it)."""
    found = shape("command_goto", "graph")
    assert found.clean["pages.log"] == ["page on-call: T-9 high"], found.summary()
    assert failing(found) == {
        ("commit", "tickets.sqlite3", at("command_goto", "INSERT INTO triaged")): "duplicate",
        ("write", "pages.log", at("command_goto", 'open("pages.log"')): "duplicate",
    }, found.summary()


def test_a_send_fan_out_keyed_per_item_and_an_upsert_to_a_value_are_green():
    """Docs, "Map-reduce with Send": each item's row ON CONFLICT DO NOTHING, the digest ON
    CONFLICT DO UPDATE SET to a value: idempotent everywhere, green."""
    found = shape("map_reduce_keyed", "graph")
    assert len(found.clean["summaries.db"]["items"]) == 3
    assert sum(p.op == "commit" for p in found.points) == 6  # the 2 tables, 3 items, the digest
    assert found.green, found.summary()


@pytest.mark.parametrize("name", ["graph", "called"])
def test_a_subgraphs_own_effect_is_repeated_only_before_its_own_node_is_saved(name):
    """Docs, "Use subgraphs", added as a node or invoked from one: the parent's checkpointer
    saves the subgraph's steps, so once the inner node's writes are saved, a recovery
    resumes inside the subgraph past it."""
    found = shape("subgraph_effect", name)
    assert failing(found) == {
        ("commit", "hotels.db", at("subgraph_effect", "INSERT INTO bookings")): "duplicate",
        (
            "write",
            "confirmations.txt",
            at("subgraph_effect", 'open("confirmations.txt"'),
        ): "duplicate",
    }, found.summary()
    inner = {"graph": "hotel", "called": "book_trip"}[name]  # the subgraph's namespace
    saved = [p for p in found.points if p.detail.startswith("writes of node book_hotel")]
    assert [(p.detail, p.where, p.outcome) for p in saved] == [
        (
            f"writes of node book_hotel in subgraph {inner}",
            at("subgraph_effect", "def book_"),
            "consistent",
        )
    ], found.summary()
    checkpoints = [p.detail for p in found.points if p.op == "put"]
    assert checkpoints.count("checkpoint of step -1 (input)") == 1, checkpoints
    assert f"checkpoint of step -1 (input) in subgraph {inner}" in checkpoints, checkpoints
    starts = [p.where for p in found.points if p.detail.startswith("writes of node __start__")]
    # LangGraph's own node: no line of LangGraph's (called: the reader's `hotel.invoke`)
    assert starts == [None, None if name == "graph" else at("subgraph_effect", "    hotel.invoke(")]
    if name == "graph":
        with pytest.raises(RunFailed, match="KeyError: 'ordr'"):
            shape("raises", "in_subgraph")  # a node of a subgraph that raises fails the run


@pytest.mark.parametrize("name", ["in_subgraph", "in_async"])
def test_a_node_that_fails_in_the_run_without_a_crash_exits_1_sync_or_async(name, tmp_path):
    """A node's error (sync, or `async def` run with `ainvoke`) is a failed exploration, as
    a red matrix is (status 1), said in one line at the reader's line: not bad input (2)."""
    done = subprocess.run(
        [sys.executable, "-m", "labkit", "explore", target("raises", name), "--kind", "graph"]
        + ["--restart-at", "now", "--out", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1 and "KeyError: 'ordr' (raises.py, line 21)" in done.stderr
    assert done.stderr.startswith("labkit: error: your code failed"), done.stderr  # not a crash


def test_async_nodes_with_aiosqlite_executemany_and_a_plain_file_write():
    """Async graph: aiosqlite's `executemany` in one transaction (one commit, placed where
    the node awaits it), then a line appended from a coroutine."""
    found = shape("async_outbox", "graph")
    assert found.clean["orders.db"] == {"lines": [["tea"], ["milk"]]}
    assert failing(found) == {
        ("commit", "orders.db", at("async_outbox", "await db.commit()")): "duplicate",
        ("write", "outbox.txt", at("async_outbox", 'open("outbox.txt"')): "duplicate",
    }, found.summary()


def test_executemany_in_autocommit_is_a_crash_point_a_row_and_keyed_is_green():
    """sqlite3 docs: `executemany` on a connection with `isolation_level=None` commits each
    row by itself. A crash after any row re-inserts all three; with INSERT OR IGNORE on a
    key, none."""
    found = shape("executemany_rows", "plain")
    rows = [p for p in found.points if p.where == at("executemany_rows", "db.executemany(")]
    assert [p.outcome for p in rows] == ["duplicate"] * 3, found.summary()
    assert [p.complaint.split(" holds ")[1][0] for p in rows] == ["4", "5", "6"]
    keyed = shape("executemany_rows", "keyed")
    assert keyed.green and len(keyed.points) == len(found.points), keyed.summary()


def test_a_wal_database_has_each_commit_found_in_its_wal_file():
    """`PRAGMA journal_mode=WAL` (as web-app guides advise): the commits go to
    app.sqlite-wal. The true matrix: the payment is repeated by a crash after its insert, the
    shipping UPDATE (to a value) never is; each CREATE TABLE is a commit at its own line."""
    found = shape("wal_sqlite", "graph")
    assert not found.unwatched and not found.green, found.unwatched
    created = [p.where for p in found.points if p.op == "commit"][:2]
    assert created == [at("wal_sqlite", "payments(order_id"), at("wal_sqlite", "orders(id")]
    assert failing(found) == {
        ("commit", "app.sqlite", at("wal_sqlite", "INSERT INTO payments")): "duplicate",
        ("commit", "app.sqlite", at("wal_sqlite", "INSERT OR IGNORE INTO orders")): "duplicate",
    }, found.summary()
    shipped = [p for p in found.points if p.where == at("wal_sqlite", "SET shipped = 1")]
    assert [p.outcome for p in shipped] == ["consistent"], found.summary()


def test_a_json_file_saved_with_os_replace_is_state_and_its_rename_a_crash_point():
    """The atomic-save recipe: the temporary file's write, then `os.replace`. The JSON file
    is the run's state (not taken for a worker's report), and the rename, where the new
    contents become visible, is a crash point at the reader's line. Setting the order's key
    in a dict is idempotent: green."""
    found = shape("json_state", "keyed")
    assert found.clean["orders.json"] == [{"o-6": "paid"}], found.summary()
    writes = [(p.detail, p.where) for p in found.points if p.op == "write"]
    assert writes == [
        ("orders.json.tmp", at("json_state", 'open("orders.json.tmp", "w")')),  # made, empty
        ("orders.json.tmp", at("json_state", "f.flush()")),  # its bytes reach the kernel
        ("orders.json", at("json_state", "os.replace(")),
    ], found.summary()
    assert found.green, found.summary()


def test_a_temporary_file_a_crash_leaves_behind_is_no_effect():
    """The recipe through `NamedTemporaryFile`: a crash after its write, before the rename,
    leaves it in the folder, and the recovery saves through another. The file the run without
    a crash wrote and renamed away holds no effect of its own: green, as with a fixed name.
    Adding to a list through it is still a second order after a crash after the rename."""
    found = shape("json_state", "keyed_in_a_temporary")
    [temporary] = found.temporaries
    assert found.clean["orders.json"] == [{"o-6": "paid"}] and temporary not in found.clean
    assert found.green, found.summary()
    # made by tempfile's os.open, its bytes at the with's end, the rename; nothing after it:
    # the descriptor tempfile's file object closed is no longer taken for that file
    writes = [(p.detail, p.where) for p in found.points if p.op == "write"]
    assert writes == [
        (temporary, at("json_state", 'NamedTemporaryFile("w"')),
        (temporary, at("json_state", 'NamedTemporaryFile("w"')),
        ("orders.json", at("json_state", "os.replace(f.name")),
    ], found.summary()
    left = [p for p in found.points if p.op == "write" and p.detail == temporary]
    assert all(temporary in os.listdir(p.run_dir) for p in left), "a crash left it behind"
    appended = shape("json_state", "appending_in_a_temporary")
    renamed = ("write", "orders.json", at("json_state", "os.replace(f.name"))
    assert failing(appended) == {renamed: "inconsistent"}, appended.summary()


def test_a_json_file_rewritten_whole_is_judged_by_its_contents():
    """Adding the order to a list: a crash after the rename and the node adds it again. The
    file keeps one line, with other contents: not the same, whatever the count says."""
    found = shape("json_state", "appending")
    assert found.clean["orders.json"] == [["o-6"]], found.summary()
    renamed = ("write", "orders.json", at("json_state", "os.replace("))
    assert failing(found) == {renamed: "inconsistent"}, found.summary()
    assert '["o-6", "o-6"]' in found.failing[0].complaint


def test_pathlib_write_text_of_a_counter_and_an_appended_log():
    """`Path.write_text` of a counter read and added to: one line, 2 where the clean run left
    1; `Path.open("a")`: a line twice. A fixed status written whole: green."""
    found = shape("pathlib_files", "counter")
    assert failing(found) == {
        ("write", "visits.txt", at("pathlib_files", "counter.write_text")): "inconsistent",
        ("write", "visits.log", at("pathlib_files", 'Path("visits.log").open')): "duplicate",
    }, found.summary()
    assert shape("pathlib_files", "status").green


def test_upserts_to_a_value_are_green_and_an_upsert_that_adds_is_not():
    keyed = shape("upserts", "keyed")
    assert keyed.green, keyed.summary()
    assert keyed.clean["billing.db"]["invoices"] == [["inv-8", "paid"]]
    counting = shape("upserts", "counting")
    counted = ("commit", "billing.db", at("upserts", "connect().execute("))
    assert failing(counting) == {counted: "inconsistent"}, counting.summary()


@pytest.fixture
def ticket_service(tmp_path):
    """Lesson 5's ticket service, started as lesson 5 starts it: a process and a folder of
    its own, outside any run folder."""
    from labkit.studies.unknown_outcome.experiment import ServiceProcess

    with ServiceProcess(tmp_path / "service").start() as service:
        yield service


@pytest.mark.parametrize("name", ["fresh", "stable"])
def test_a_tool_that_calls_an_http_service_is_never_green_and_not_replayed(
    name, ticket_service, tmp_path
):
    """The tutorial's tools call a service over HTTP: its tickets are in another process's
    file, which no crash state holds. The explorer cannot see the window between the reply
    and the node's saved writes (a fresh key: a second ticket), so it must fail, on the
    command line as in the API, and call the service only in the run without a crash."""
    config = {
        "configurable": {
            "ticket_url": f"http://127.0.0.1:{ticket_service.port}",
            "ticket_secret": ticket_service.secret,
        }
    }
    done = subprocess.run(
        [sys.executable, "-m", "labkit", "explore", target("http_ticket", name), "--kind"]
        + ["graph", "--restart-at", "now", "--config", json.dumps(config), "--json"]
        + ["--out", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    found = json.loads(done.stdout)
    assert found["outside"] == [f"tcp://127.0.0.1:{ticket_service.port}"], found["outside"]
    assert len(ticket_service.tickets("shop")) == 1  # no replay called it again
    # its own words: the explorer cannot see the service's state; run it inside, or a fake
    assert found["points"][0]["failed"]["code"] == "run_network", found["points"][0]
    summary = Exploration.from_json(found).summary()
    assert "ticket_service()" in summary and "relative paths" not in summary, summary
    assert "connected to" in failed_words(found["points"][0]["failed"])


def test_the_command_line_refuses_a_store_in_memory_in_one_line_and_passes_a_keyed_graph(
    tmp_path,
):
    """As a new user runs it: status 2 and one line for the graph on an InMemoryStore,
    status 0 for the keyed fan-out."""

    def run(module: str, name: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "labkit", "explore", target(module, name), "--kind", "graph"]
            + ["--restart-at", "now", "--out", str(tmp_path / module)],
            capture_output=True,
            text=True,
            timeout=120,
        )

    refused = run("memory_store", "graph")
    assert refused.returncode == 2, refused.stderr
    assert "InMemoryStore" in refused.stderr and refused.stderr.count("\n") == 1, refused.stderr
    green = run("map_reduce_keyed", "graph")
    assert green.returncode == 0, green.stdout + green.stderr


def test_a_lines_dates_times_and_uuids_are_not_compared_but_its_words_are():
    """The checker compares a file's lines as a table's rows: a log line's date, time of day
    and UUID differ between two equal runs (blanked), its words do not (compared)."""
    from labkit.studies.explorer.checker import CrashState, default_checker

    sent = "2026-12-04 10:00:01,123 sent to {} id=" + "a" * 32
    clean = {
        "m.jsonl": [{"at": "2026-12-04T10:00:01Z", "to": "ana"}],
        "mail.log": [sent.format("ana")],
    }

    def judged(line: str, to: str = "ana"):
        after = {"m.jsonl": [{"at": "2027-01-05T23:59Z", "to": to}], "mail.log": [line]}
        return default_checker(CrashState({"n": 1}, {}, after, clean, finished=True))

    later = "2027-01-05 23:59:59.9 sent to ana id=" + "b" * 32
    assert judged(later) is None
    other = judged(sent.format("bo"))
    assert (other.code, other.fields["file"]) == ("holds_other", "mail.log"), other
    assert other.fields["row"] == '"_ sent to bo id=_"', other
    record = judged(sent.format("ana"), to="bo")
    assert record.fields["row"] == '{"at": null, "to": "bo"}', record


@contextlib.contextmanager
def watched(tmp_path, files=None):
    """A commit watch on `tmp_path` and what it reported (commits by file name, trace
    events as pairs), with the process's connections watched until the test ends."""
    import _sqlite3

    from labkit.bench.commit_watch import CommitWatch

    class Trace:
        def event(self, name: str, **fields: object) -> None:
            seen.append((name, fields))

    seen: list = []
    watch = CommitWatch(str(tmp_path), files, seen.append, Trace())
    modules = (sqlite3, sqlite3.dbapi2, _sqlite3)  # what watch_process changes: put back after
    real = [(module.connect, module.Connection) for module in modules]
    watch.watch_process()
    try:
        yield watch, seen
    finally:
        for module, (connect, connection) in zip(modules, real, strict=True):
            module.connect, module.Connection = connect, connection


def test_the_commit_watch_counts_wal_commits_across_checkpoints(tmp_path):
    """In WAL mode a commit is a commit frame in the -wal file; a checkpoint copies pages
    back to the file and may start the -wal again (a new salt): no commit, whether asked
    for (TRUNCATE, RESTART), run by SQLite at 1000 pages, or by the last close; the commits
    after it are counted from the start. Frames there before the watch are no commits."""
    (tmp_path / "old.db").write_bytes(b"")
    old = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    old.execute("PRAGMA journal_mode=WAL").fetchall()
    old.execute("CREATE TABLE t(x)")  # a frame in old.db-wal, left open
    with watched(tmp_path) as (watch, seen):
        db = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
        db.execute("INSERT INTO t VALUES(1)")
        assert seen == ["old.db"]
        seen.clear()
        db = sqlite3.connect(tmp_path / "app.sqlite", isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL").fetchall()
        for statement in (
            "CREATE TABLE t(x)",
            "INSERT INTO t VALUES(1)",
            "INSERT INTO t VALUES(2)",
        ):
            db.execute(statement)
        assert seen == ["app.sqlite"] * 3
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        db.execute("INSERT INTO t VALUES(3)")
        db.execute("PRAGMA wal_checkpoint(RESTART)").fetchall()
        db.execute("UPDATE t SET x = x + 1")
        assert seen == ["app.sqlite"] * 5, seen
        big = "x" * 4000  # a page each: 1100 pages pass the autocheckpoint's 1000
        db.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1100) "
            "INSERT INTO t SELECT ? FROM n",
            (big,),
        )
        db.execute("INSERT INTO t VALUES(4)")  # the WAL starts again: a new salt
        db.close()
        watch.observe()
        assert seen == ["app.sqlite"] * 7, seen
        db = sqlite3.connect(tmp_path / "app.sqlite", isolation_level=None)
        db.execute("INSERT INTO t VALUES(5)")
        db.close()
        watch.observe()
    assert seen == ["app.sqlite"] * 8, seen


def test_a_wal_file_the_watch_cannot_read_is_named_unwatched(tmp_path):
    """A `-wal` file that holds no WAL (not SQLite's, torn): its commits cannot be counted,
    so the file is named unwatched, once, for the explorer never to call the run green."""
    db = sqlite3.connect(tmp_path / "app.sqlite", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL").fetchall()
    db.execute("CREATE TABLE t(x)")
    db.close()
    with watched(tmp_path, ["app.sqlite"]) as (watch, seen):
        (tmp_path / "app.sqlite-wal").write_bytes(b"not a WAL" * 10)
        watch.observe()
        watch.observe()
    assert seen == [("unwatched", {"files": ["app.sqlite"], "reason": "wal"})], seen
