"""Time travel (lesson 4's last part): replaying from an earlier checkpoint and forking it run
the later nodes again, with their side effects; a stable key per (thread, node) keeps one
ticket per node. Real LangGraph workers forked from the trial server, on a SqliteSaver file;
the runs and tickets are read back here from the files, through a connection of our own."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

import labkit as lk
from labkit.bench.ledger import read_ledger
from labkit.language import say
from labkit.studies.durability.time_travel import run_time_travel
from labkit.views.time_travel import savers_line, time_travel_line


def per_node(run_dir: str) -> tuple[Counter, Counter]:
    """(starts per node in the ledger, tickets per node in tickets.db), read from the files."""
    starts = Counter(ln["node"] for ln in read_ledger(run_dir) if ln["phase"] == "start")
    db = sqlite3.connect(f"file:{Path(run_dir) / 'tickets.db'}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT op_key, payload FROM ticket").fetchall()
    finally:
        db.close()
    return starts, Counter(json.loads(payload)["title"] for _, payload in rows)


@pytest.fixture(scope="module")
def fresh():
    return run_time_travel("fresh")


@pytest.fixture(scope="module")
def stable():
    return run_time_travel("stable")


def test_replay_and_fork_run_b_c_d_again_and_a_fresh_key_repeats_their_effects(fresh):
    assert fresh["failure"] is None
    starts, tickets = per_node(fresh["run_dir"])
    assert starts == {"a": 1, "b": 3, "c": 3, "d": 3}  # once, then replay and fork: b, c, d
    assert tickets == {"a": 1, "b": 3, "c": 3, "d": 3}  # every run a new ticket: 10 in all
    runs = {phase: [fresh["after"][phase][n]["runs"] for n in "abcd"] for phase in fresh["after"]}
    assert runs == {"first": [1, 1, 1, 1], "replay": [1, 2, 2, 2], "fork": [1, 3, 3, 3]}
    reports = fresh["reports"]
    assert reports["first"]["log"] == ["a", "b", "c", "d"]
    assert reports["replay"]["log"] == ["a", "b", "c", "d"]  # a's update, from the checkpoint
    assert reports["fork"]["log"] == ["a", "edited", "b", "c", "d"]  # the fork's own edit
    assert reports["fork"]["checkpoint_id"] != reports["replay"]["checkpoint_id"]


def test_a_stable_key_per_thread_and_node_keeps_one_ticket_per_node(stable):
    assert stable["failure"] is None
    starts, tickets = per_node(stable["run_dir"])
    assert starts == {"a": 1, "b": 3, "c": 3, "d": 3}  # the nodes still run again
    assert tickets == {"a": 1, "b": 1, "c": 1, "d": 1}  # their effects do not


def test_on_lesson_7s_postgres_saver_the_same_nodes_run_again(fresh, stable):
    fresh_pg, stable_pg = (run_time_travel(key, "postgres") for key in ("fresh", "stable"))
    assert fresh_pg["failure"] is None and stable_pg["failure"] is None
    assert per_node(fresh_pg["run_dir"]) == ({"a": 1, "b": 3, "c": 3, "d": 3},) * 2
    assert per_node(stable_pg["run_dir"])[1] == {"a": 1, "b": 1, "c": 1, "d": 1}
    assert fresh_pg["reports"]["fork"]["log"] == ["a", "edited", "b", "c", "d"]
    assert not (Path(fresh_pg["run_dir"]) / "checkpoints.db").exists()  # in Postgres only
    on_sqlite, on_postgres = (
        {"fresh": fresh, "stable": stable},
        {"fresh": fresh_pg, "stable": stable_pg},
    )
    assert savers_line(on_sqlite, on_postgres) == say("time_travel.savers.same")


def test_the_line_reads_the_counts(fresh, stable, chinese):
    line = time_travel_line(fresh, stable)
    assert "b、c、d" in line and "新键为 10 张" in line and "稳定键为 4 张" in line


def test_an_unknown_key_is_one_line_naming_the_choices():
    with pytest.raises(lk.LabError, match="fresh, stable"):
        run_time_travel("random")
    with pytest.raises(lk.LabError, match="sqlite, postgres"):
        run_time_travel("stable", "redis")
