"""Lesson 5, the outbox: real producer, relay and consumer processes, real SIGKILLs, the files
read back through a connection of the test's own (read-only, opened afresh)."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from labkit.bench.errors import LabError
from labkit.bench.trace import read_trace
from labkit.studies.outbox.experiment import (
    CONSUMERS,
    OUTBOX_KILL_POINTS,
    OutboxResult,
    OutboxSpec,
    execute_outbox,
    outbox_sweep,
    run_outbox,
)
from labkit.studies.outbox.stepping import OutboxStepSession
from tests.conftest import STDLIB, processes_mentioning, worker_imports

# (kill point) -> who dies, then per consumer: (orders, sent, effects, inbox) after the kill,
# the same after recovery, deliveries, outcome
PLAIN = {
    "none": ((1, 1, 1, 0), (1, 1, 1, 0), 1, "consistent"),
    "in_transaction": ((0, 0, 0, 0), (0, 0, 0, 0), 0, "nothing"),
    "committed": ((1, 1, 1, 0), (1, 1, 1, 0), 1, "consistent"),
    "before_deliver": ((1, 0, 0, 0), (1, 1, 1, 0), 1, "consistent"),
    "consumer_committed": ((1, 0, 1, 0), (1, 1, 2, 0), 2, "duplicate"),
    "after_deliver": ((1, 0, 1, 0), (1, 1, 2, 0), 2, "duplicate"),
    "after_mark": ((1, 1, 1, 0), (1, 1, 1, 0), 1, "consistent"),
}
DEDUPE = {
    "none": ((1, 1, 1, 1), (1, 1, 1, 1), 1, "consistent"),
    "in_transaction": ((0, 0, 0, 0), (0, 0, 0, 0), 0, "nothing"),
    "committed": ((1, 1, 1, 1), (1, 1, 1, 1), 1, "consistent"),
    "before_deliver": ((1, 0, 0, 0), (1, 1, 1, 1), 1, "consistent"),
    "consumer_committed": ((1, 0, 1, 1), (1, 1, 1, 1), 2, "consistent"),
    "after_deliver": ((1, 0, 1, 1), (1, 1, 1, 1), 2, "consistent"),
    "after_mark": ((1, 1, 1, 1), (1, 1, 1, 1), 1, "consistent"),
}
EXPECTED = {"plain": PLAIN, "dedupe": DEDUPE}
VICTIM = {"producer": "producer", "relay": "relay", "consumer": "relay-consumer-1"}


def read_back(run_dir: Path) -> dict[str, list[tuple]]:
    """Every row of the four tables, through a new read-only connection per file."""
    rows = {}
    for file, tables in (
        ("business.db", ("orders", "outbox")),
        ("consumer.db", ("effects", "inbox")),
    ):
        uri = f"{(run_dir / file).as_uri()}?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
            for table in tables:
                rows[table] = db.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()
    return rows


def counts(rows: dict[str, list[tuple]]) -> tuple[int, int, int, int]:
    sent = sum(row[3] for row in rows["outbox"])
    return len(rows["orders"]), sent, len(rows["effects"]), len(rows["inbox"])


def test_the_expected_table_covers_every_kill_point_and_consumer():
    assert set(EXPECTED) == set(CONSUMERS)
    assert all(set(table) == set(OUTBOX_KILL_POINTS) for table in EXPECTED.values())


@pytest.mark.parametrize("consumer", list(CONSUMERS))
@pytest.mark.parametrize("kill_at", list(OUTBOX_KILL_POINTS))
def test_every_kill_point_for_both_consumers(tmp_path, no_leftover_workers, consumer, kill_at):
    result = run_outbox(consumer, kill_at, out=tmp_path / "run")
    before, after, deliveries, outcome = EXPECTED[consumer][kill_at]
    rows = read_back(tmp_path / "run")
    assert counts(rows) == after
    assert result.after.table("effects").rows == [list(row) for row in rows["effects"]]
    summary = result.summary()
    b = summary["before"]
    assert (b["orders"], b["sent"], b["effects"], b["inbox"]) == before
    assert (summary["deliveries"], summary["outcome"], summary["failure"]) == (
        deliveries,
        outcome,
        None,
    )
    dies = OUTBOX_KILL_POINTS[kill_at][0]
    if dies == "nobody":
        assert set(summary["exits"].values()) == {0} and summary["killed"] is None
    else:  # a real SIGKILL of the planned process, and every other process ended by itself
        assert summary["killed"] == VICTIM[dies]
        assert summary["exits"][VICTIM[dies]] == -9
        assert [c for r, c in summary["exits"].items() if r != VICTIM[dies]] == [0] * (
            len(summary["exits"]) - 1
        )
    # one message id, made once by the producer, carried by every delivery
    ids = {row[1] for row in rows["outbox"]} | {row[1] for row in rows["effects"]}
    assert len(ids) == (1 if rows["orders"] else 0)
    if consumer == "dedupe" and rows["orders"]:
        assert [row[1:] for row in rows["inbox"]] == [("shipping", ids.pop())]


def test_the_redelivery_is_in_the_trace_and_the_recovering_relay_made_it(tmp_path):
    result = run_outbox("plain", "after_deliver", out=tmp_path / "run")
    deliveries = [e for e in result.trace() if e["event"] == "deliver"]
    assert [e["role"] for e in deliveries] == ["relay", "recovery"]
    assert len({e["message_id"] for e in deliveries}) == 1
    assert [e["pid"] for e in deliveries][0] == result.workers["relay"].pid
    assert deliveries[1]["pid"] == result.workers["recovery"].pid != result.workers["relay"].pid
    saved = json.loads((tmp_path / "run" / "results.json").read_text())
    assert saved["outcome"] == "duplicate" and saved["after"]["effects"] == 2


def test_a_dedupe_consumer_seeing_a_redelivery_says_so_and_changes_nothing(tmp_path):
    result = run_outbox("dedupe", "consumer_committed", out=tmp_path / "run")
    seen = [e for e in result.trace() if e["event"] == "seen"]
    assert [e["role"] for e in seen] == ["recovery-consumer-1"]
    unconfirmed = [e for e in result.trace() if e["event"] == "unconfirmed"]
    assert [e["role"] for e in unconfirmed] == ["relay"]  # the relay never heard back


@pytest.fixture
def private_tmpdir(tmp_path, monkeypatch) -> Path:
    """A temp directory of this test's own: whatever lands there came from this test."""
    home = tmp_path / "tmpdir"
    home.mkdir()
    monkeypatch.setenv("TMPDIR", str(home))
    monkeypatch.setattr(tempfile, "tempdir", str(home))
    return home


def test_nothing_is_written_outside_the_run_folder(tmp_path, private_tmpdir):
    home = private_tmpdir
    run_outbox("plain", "after_deliver", out=tmp_path / "run")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "tmpdir"]
    assert list(home.iterdir()) == []
    names = {p.name for p in (tmp_path / "run").iterdir()}
    assert {"business.db", "consumer.db", "trace.jsonl", "results.json", "before.json"} <= names
    assert {"relay.stdout", "relay-consumer-1.stderr", "recovery-consumer-1.stdout"} <= names


def test_a_run_without_out_goes_to_a_new_folder_in_the_runs_home():
    result = run_outbox("dedupe")
    home = Path(os.environ["TMPDIR"]) / f"labkit-runs-{os.getuid()}"
    assert result.run_dir.parent == home and result.run_dir.name.startswith("outbox-")


BAD = [
    ({"consumer": "fancy"}, "unknown consumer 'fancy'; choose one of: plain, dedupe"),
    ({"kill_at": "after_send"}, "unknown kill point 'after_send'; choose one of: none,"),
    ({"timeout": 0}, "timeout must be a number above 0"),
    ({"out": ""}, "out must name a folder"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD)
def test_bad_input_is_one_line_naming_the_choices(private_tmpdir, kwargs, message):
    with pytest.raises(LabError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        run_outbox(**kwargs)
    with pytest.raises(LabError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        OutboxSpec(**kwargs)
    assert list(private_tmpdir.iterdir()) == []  # no runs home, no run folder


def test_an_existing_out_folder_is_refused_and_left_alone(tmp_path):
    (tmp_path / "taken").mkdir()
    with pytest.raises(LabError, match="already exists"):
        run_outbox(out=tmp_path / "taken")
    assert list((tmp_path / "taken").iterdir()) == []
    with pytest.raises(LabError, match="spec must be an OutboxSpec"):
        execute_outbox("plain")


def labkit_cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "labkit", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--consumer", "fancy"], "unknown consumer 'fancy'; choose one of: plain, dedupe"),
        (["--kill-at", "later"], "choose one of: none, in_transaction, committed,"),
        (["--kill-at", "after_mark", "--sweep"], "not allowed with argument --kill-at"),
        (["--sweep", "--consumer", "dedupe"], "--sweep runs both consumers"),
        (["--step", "--json"], "--step shows the files as it goes"),
        (["--graph", "--kill-at", "committed"], "not allowed with argument --graph"),
        (["--graph", "--step"], "not allowed with argument --graph"),
        (["--sweep", "--graph"], "not allowed with argument --sweep"),
    ],
)
def test_cli_bad_input_is_status_2_and_one_line(tmp_path, args, says):
    done = labkit_cli("outbox", *args, "--out", str(tmp_path / "run"))
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and says in done.stderr and done.stdout == ""
    assert not (tmp_path / "run").exists()


def test_cli_run_json_and_text(tmp_path):
    done = labkit_cli(
        "outbox", "--kill-at", "after_deliver", "--json", "--out", str(tmp_path / "a")
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["outcome"], summary["after"]["effects"], summary["exits"]["relay"]) == (
        "duplicate",
        2,
        -9,
    )
    text = labkit_cli(
        "outbox", "--consumer", "dedupe", "--kill-at", "after_deliver", "--out", str(tmp_path / "b")
    )
    assert text.returncode == 0, text.stderr
    assert "outcome: CONSISTENT: the order's message took effect exactly once" in text.stdout
    assert "relay: killed by SIGKILL" in text.stdout and "consumer.db · inbox" in text.stdout


def test_cli_sweep_classifies_every_kill_point_for_both_consumers(tmp_path):
    done = labkit_cli("outbox", "--sweep", "--json", "--out", str(tmp_path / "sweep"))
    assert done.returncode == 0, done.stderr
    got = {(r["consumer"], r["kill_at"]): r["outcome"] for r in json.loads(done.stdout)}
    assert got == {(c, p): EXPECTED[c][p][3] for c in CONSUMERS for p in OUTBOX_KILL_POINTS}


def test_cli_step_pauses_at_each_boundary_and_kills_on_k(tmp_path):
    done = labkit_cli("outbox", "--step", "--out", str(tmp_path / "run"), stdin="c\nc\nc\nk\n")
    assert done.returncode == 0, done.stderr
    paused = [line for line in done.stdout.splitlines() if line.startswith("=== paused at")]
    assert [p.split("'")[1] for p in paused] == [
        "in_transaction",
        "committed",
        "before_deliver",
        "after_deliver",
    ]
    assert "SIGKILL the relay at 'after_deliver'" in done.stdout
    assert counts(read_back(tmp_path / "run")) == (1, 1, 2, 0)


def test_step_session_kills_the_producer_inside_its_transaction(tmp_path, no_leftover_workers):
    with OutboxStepSession("dedupe", tmp_path / "run") as session:
        assert (session.stage, session.paused_at) == ("producer", "in_transaction")
        assert session.kill() == "in_transaction"
        with pytest.raises(LabError, match="no process is paused"):
            session.proceed()
        result = session.recover()
        with pytest.raises(LabError, match="recovered already"):
            session.recover()
    assert isinstance(result, OutboxResult)
    assert (result.outcome, result.killed) == ("nothing", "producer")
    assert counts(read_back(tmp_path / "run")) == (0, 0, 0, 0)


def test_step_session_closed_while_paused_reaps_the_relay(tmp_path):
    session = OutboxStepSession("plain", tmp_path / "run")
    session.proceed()
    assert session.proceed() == "before_deliver"
    relay = session.worker.proc.pid
    session.close()
    assert not Path(f"/proc/{relay}").exists()
    assert processes_mentioning(str(tmp_path)) == []
    with pytest.raises(LabError, match="closed"):
        session.kill()


def test_sweep_folders_and_outcomes(tmp_path):
    seen = []
    results = outbox_sweep(tmp_path / "sweep", progress=lambda d, t, r: seen.append((d, t)))
    assert seen[-1] == (14, 14) and len(results) == 14
    assert sorted(p.name for p in (tmp_path / "sweep").iterdir()) == sorted(
        r.spec.label for r in results
    )
    words = {r.outcome for r in results}
    assert words == {"consistent", "duplicate", "nothing"}


def test_views_say_the_outcome_in_words_and_draw_a_lane_per_process(tmp_path):
    from labkit.views.outbox import format_outbox_sweep, outbox_html, outbox_timeline

    result = run_outbox("plain", "after_deliver", out=tmp_path / "run")
    html = outbox_html(result)
    assert "DUPLICATE" in html and "took effect more than once" in html
    assert "duplicate: the message took effect more than once" in format_outbox_sweep([result])
    figure = outbox_timeline(result)
    axis = figure.axes[0]
    assert [t.get_text() for t in axis.get_yticklabels()] == ["producer", "relay", "consumer"]
    labels = [t.get_text() for t in axis.texts]
    assert "SIGKILL at after_deliver" in labels
    assert {"relay", "recovery", "recovery-consumer-1", "producer"} <= set(labels)
    arrows = [a for a in axis.texts if getattr(a, "arrow_patch", None) is not None]
    assert len(arrows) == 2  # one delivery by the first relay, one by the recovering relay
    with pytest.raises(LabError, match="result must be an OutboxResult"):
        outbox_html({"outcome": "duplicate"})


@pytest.mark.parametrize("worker", ["producer", "relay", "consumer"])
def test_the_outbox_workers_import_only_the_standard_library_and_labkit(worker):
    assert worker_imports(f"labkit.studies.outbox.{worker}") - {"labkit"} <= STDLIB


# The LangGraph variant: the node writes the outbox row; its replay after a kill adds nothing.


def ledger_lines(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "ledger.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("consumer", list(CONSUMERS))
def test_the_graph_node_runs_twice_and_the_message_takes_effect_once(
    tmp_path, no_leftover_workers, consumer
):
    from labkit import run_outbox_graph

    steps = []  # reported as each step ends, while the server goes on with the next

    result = run_outbox_graph(
        consumer, out=tmp_path / "run", progress=lambda done, total, _: steps.append((done, total))
    )
    assert steps == [(1, 3), (2, 3), (3, 3)]
    lines = ledger_lines(tmp_path / "run")
    # the relay delivered the message once, after both of the node's runs (the lab's clock)
    delivered = [e for e in read_trace(tmp_path / "run") if e["event"] == "deliver"]
    assert [e["role"] for e in delivered] == ["relay"]
    assert delivered[0]["t_ns"] > max(line["t_ns"] for line in lines)
    # the replay: the node ran in the killed worker and again in the resuming one
    assert [line["node"] for line in lines] == ["place_order", "place_order"]
    assert lines[0]["pid"] != lines[1]["pid"]
    assert [(ln["wrote_order"], ln["wrote_message"]) for ln in lines] == [
        (True, True),
        (False, False),
    ]
    assert result["found_next"] == ["place_order"]  # LangGraph had not saved the node's result
    rows = read_back(tmp_path / "run")
    assert len(rows["orders"]) == len(rows["outbox"]) == len(rows["effects"]) == 1
    assert rows["outbox"][0][3] == 1  # marked sent
    assert rows["effects"][0][1] == rows["outbox"][0][1]  # the message the node wrote
    assert len(rows["inbox"]) == (1 if consumer == "dedupe" else 0)
    trace = [json.loads(line) for line in (tmp_path / "run" / "trace.jsonl").open()]
    assert [e["role"] for e in trace if e["event"] == "deliver"] == ["relay"]
    assert result["exits"] == {"graph": -9, "resume": 0, "relay": 0, "relay-consumer-1": 0}
    assert (result["node_runs"], result["deliveries"], result["outcome"]) == (2, 1, "consistent")
    assert (result["after"]["outbox"], result["after"]["effects"]) == (1, 1)
    assert result["before_relay"]["sent"] == 0 and result["failure"] is None
    for line in lines:  # both graph workers (forks of the trial server) are reaped
        assert not Path(f"/proc/{line['pid']}").exists()


def test_the_graph_run_writes_nothing_outside_its_folder(tmp_path):
    cwd, tmpdir = tmp_path / "cwd", tmp_path / "tmpdir"
    cwd.mkdir(), tmpdir.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "labkit", "outbox", "--graph", "--out", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "TMPDIR": str(tmpdir)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "node runs (ledger): 2, writing: order + message, then nothing" in done.stdout
    assert "outbox rows 1 · deliveries 1 · effects 1" in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "run", "tmpdir"]
    assert list(cwd.iterdir()) == []
    # the trial server's runs home (its warm-up folder is gone) and nothing else
    assert [list(home.iterdir()) for home in tmpdir.iterdir()] in ([], [[]])
    names = {p.name for p in (tmp_path / "run").iterdir()}
    assert {"business.db", "consumer.db", "checkpoints.db", "ledger.jsonl", "results.json"} <= names
    assert processes_mentioning(str(tmp_path)) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"consumer": "fancy"}, "unknown consumer 'fancy'; choose one of: plain, dedupe"),
        ({"timeout": 0}, "timeout must be a number above 0"),
        ({"out": ""}, "out must name a folder"),
    ],
)
def test_graph_bad_input_is_one_line(private_tmpdir, kwargs, message):
    from labkit import run_outbox_graph

    with pytest.raises(LabError, match="^" + message):
        run_outbox_graph(**kwargs)
    assert list(private_tmpdir.iterdir()) == []


def test_graph_out_folder_taken_is_refused_and_left_alone(tmp_path):
    from labkit import run_outbox_graph

    (tmp_path / "taken").mkdir()
    with pytest.raises(LabError, match="already exists"):
        run_outbox_graph(out=tmp_path / "taken")
    assert list((tmp_path / "taken").iterdir()) == []


def test_cli_graph_json(tmp_path):
    done = labkit_cli(
        "outbox", "--graph", "--consumer", "dedupe", "--json", "--out", str(tmp_path / "r")
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["node_runs"], summary["deliveries"], summary["after"]["effects"]) == (2, 1, 1)
    assert summary["after"]["inbox"] == 1 and summary["killed"] == "graph"
