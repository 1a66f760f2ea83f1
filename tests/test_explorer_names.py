"""The crash explorer on a reader's files that happen to carry names the lab uses too, and on
values that only look like the lab's: each is the reader's state, judged as any other, or
refused in one line, never skipped into a green matrix.

Each graph makes one effect in its first node, then ends in a second: under durability "sync" a
crash after that effect and before the node's writes are saved repeats it, so the TRUE matrix
fails exactly there (duplicate, or inconsistent where the effect changes a value).
"""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path

import pytest
from test_explorer import labkit

from labkit.bench.errors import RunFailed
from labkit.studies.explorer.replay import explore

GRAPH = """
import json
import sqlite3
from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    order: str


def effect(state: State) -> dict:
{effect}
    return {{}}


def done(state: State) -> dict:
    return {{}}


graph = (
    StateGraph(State)
    .add_node(effect)
    .add_node(done)
    .add_edge(START, "effect")
    .add_edge("effect", "done")
    .add_edge("done", END)
)
INPUT = {{"order": "o-1"}}
"""
EFFECTS = {
    # the reader's own database, named as the explorer's checkpointer used to be
    "checkpoints.db": """
    db = sqlite3.connect("checkpoints.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS charges(order_id TEXT)")
    db.execute("INSERT INTO charges VALUES(?)", (state["order"],))
    db.close()""",
    # a chat history, named as lesson 5's calls' history, in a run that calls no service
    "history.jsonl": """
    with open("history.jsonl", "a") as history:
        history.write(json.dumps({"role": "assistant", "text": "refund sent"}) + "\\n")""",
    # a table whose name holds a double quote
    'sent"log': """
    db = sqlite3.connect("effect.db", isolation_level=None)
    db.execute('CREATE TABLE IF NOT EXISTS "sent""log"(order_id TEXT)')
    db.execute('INSERT INTO "sent""log" VALUES(?)', (state["order"],))
    db.close()""",
    # a quota of 2 GiB in bytes, charged 1 MiB: a number in the range of a clock's seconds
    "quota": """
    db = sqlite3.connect("quota.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS quota(user TEXT PRIMARY KEY, bytes_left INTEGER)")
    db.execute("INSERT OR IGNORE INTO quota VALUES('ann', 2 * 1024 * 1024 * 1024)")
    db.execute("UPDATE quota SET bytes_left = bytes_left - 1048576")
    db.close()""",
}
WHERE = {  # the effect's commit or write: the point where a crash repeats it
    "checkpoints.db": ("commit", "checkpoints.db", "duplicate"),
    "history.jsonl": ("write", "history.jsonl", "duplicate"),
    'sent"log': ("commit", "effect.db", "duplicate"),
    "quota": ("commit", "quota.db", "inconsistent"),
}


def graph_file(folder: Path, effect: str) -> str:
    path = folder / "shop.py"
    path.write_text(GRAPH.format(effect=textwrap.indent(textwrap.dedent(effect), "    ")))
    return f"{path}:graph"


@pytest.mark.parametrize("name", list(EFFECTS))
def test_a_readers_file_named_as_the_labs_or_holding_a_big_number_fails_where_it_repeats(
    name, tmp_path
):
    found = explore(graph_file(tmp_path, EFFECTS[name]), "graph", restart_at="now")
    op, detail, outcome = WHERE[name]
    failing = {(p.op, p.detail, p.outcome) for p in found.failing}
    assert failing == {(op, detail, outcome)}, found.summary()
    assert not found.unwatched and not found.outside, found.summary()


def test_the_readers_checkpoints_db_holds_its_charges_and_the_explorers_state_is_apart(tmp_path):
    """What the point's folder holds after the crash that repeats the charge: two charges in
    the reader's checkpoints.db, beside the explorer's own checkpointer file."""
    found = explore(graph_file(tmp_path, EFFECTS["checkpoints.db"]), "graph", restart_at="now")
    (point,) = found.failing
    folder = Path(point.run_dir)
    with sqlite3.connect(folder / "checkpoints.db") as db:
        assert db.execute("SELECT count(*) FROM charges").fetchone() == (2,)
    assert (folder / ".labkit-checkpoints.db").is_file()


@pytest.mark.parametrize("name", ["recovery.json", "first.json", "record.stdout"])
def test_a_file_named_as_an_explorer_workers_report_is_refused_in_the_recording(name, tmp_path):
    """A reader's recovery.json, before any recovery has run: refused in the run without a
    crash (one line that says the file is the lab's), never overwritten by a recovery's report
    and then judged."""
    effect = f"""
    with open({name!r}, "a") as out:
        out.write(json.dumps({{"order": state["order"]}}) + "\\n")"""
    with pytest.raises(RunFailed) as refused:
        explore(graph_file(tmp_path, effect), "graph", restart_at="now")
    said = str(refused.value)
    assert "LabsOwnFile" in said and name in said and "\n" not in said, said


PACKAGE = {  # a project laid out as a package: a relative import, a module named `email`
    "notifier/__init__.py": "",
    "notifier/sales.py": """
        import sqlite3


        def record_sale(order):
            db = sqlite3.connect("sales.db", isolation_level=None)
            db.execute("CREATE TABLE IF NOT EXISTS sales(order_id TEXT)")
            db.execute("INSERT INTO sales VALUES(?)", (order,))
            db.close()
        """,
    "notifier/email.py": GRAPH.format(
        effect="    record_sale(state['order'])\n    EmailMessage()"
    ).replace(
        "import json\n",
        "from email.message import EmailMessage\n\nfrom .sales import record_sale\n",
    ),
}


def test_a_module_of_the_readers_package_is_explored_by_its_dotted_name(tmp_path):
    """`labkit explore notifier.email:graph` in the project's folder, as the README says: its
    relative import works, its module named `email` is notifier's (the standard library's
    `email` still imports), and the sale is repeated where a crash repeats it."""
    for name, code in PACKAGE.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(code))
    done = labkit(tmp_path, "explore", "notifier.email:graph", "--kind", "graph", "--json")
    assert done.returncode == 1, done.stderr
    found = json.loads(done.stdout)
    failing = {(p["op"], p["detail"], p["outcome"]) for p in found["points"]}
    assert ("commit", "sales.db", "duplicate") in failing, found["points"]
    assert {outcome for *_, outcome in failing} == {"consistent", "duplicate"}
    assert not list(tmp_path.rglob("__pycache__"))  # nothing of ours in the reader's folder
