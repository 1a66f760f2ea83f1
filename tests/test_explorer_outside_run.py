"""The crash explorer runs graphs and steps as people outside the lab write them (issue 25,
items 4 and 7-16): the outside-shaped targets are in tests/outside/, one file per item.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from labkit.bench.errors import LabError, RunFailed
from labkit.studies.explorer.replay import explore

OUTSIDE = Path(__file__).parent / "outside"
LINEAR = "labkit.studies.explorer.lab:linear"  # study 004's graph: a ledger line in each node


def target(file: str, name: str) -> str:
    return f"{OUTSIDE / file}:{name}"


@pytest.mark.parametrize(
    ("name", "restart"), [("monthly", "month"), ("yearly", "year"), ("hashed", "hash")]
)
def test_a_key_that_changes_only_across_a_real_restart_fails_and_says_which(name, restart):
    """Item 4: recovered at once, a day later, in the next month and year, and in a new
    interpreter; each key fails at the restart that changes it, and the row says which."""
    found = explore(target("restart_keys.py", name), restart_at=("now", "day", restart))
    assert {p.n: (p.outcome, p.restart) for p in found.failing} == {1: ("duplicate", restart)}
    assert Path(found.point(1).run_dir).name == f"after-{restart}"
    green = explore(target("restart_keys.py", name), restart_at="now")
    assert green.green, green.failing  # a restart at once sees nothing
    with pytest.raises(LabError, match="unknown restart 'week'; choose one of: now, day"):
        explore(target("restart_keys.py", name), restart_at="day,week")


def test_interrupts_are_answered_with_the_readers_value_or_function_of_the_payload():
    """Item 7: the docs' tool behind interrupt() expects {"action": "approve"}; True fails in
    the node. A value, or a function of the payload, answers it, in the run and in recovery."""
    approve = {"action": "approve"}
    by_value = explore(target("approve_tool.py", "graph"), "graph", resume=approve)
    by_payload = explore(
        target("approve_tool.py", "graph"),
        "graph",
        resume_by=target("approve_tool.py", "only_colleagues"),
    )
    for found in (by_value, by_payload):
        assert found.clean["outbox.db"]["outbox"] == [["ana@example.com"]], found.clean
        assert {p.outcome for p in found.failing} == {"duplicate"}  # sent, then killed
    with pytest.raises(LabError, match="resume must be a JSON value"):
        explore(target("approve_tool.py", "graph"), "graph", resume={1, 2})
    with pytest.raises(LabError, match="not two"):
        explore(target("approve_tool.py", "graph"), "graph", resume=approve, resume_by="m:f")


def test_answers_in_order_answer_the_same_question_twice_across_every_kill():
    """Item 7, a list in order: the docs' validation loop asks "What is your age?" until the
    answer is valid, then whom to tell. The n-th interrupt gets the n-th answer, in the run
    and in every recovery, killed before or after an answer was saved: the outbox holds the
    valid age and the address, once, whatever the crash point."""
    found = explore(
        target("age_question.py", "graph"), "graph", resumes=["forty", 40, "ana@example.com"]
    )
    assert found.clean["outbox.db"]["outbox"] == [["ana@example.com", 40]], found.clean
    assert {p.outcome for p in found.failing} == {"duplicate"}, found.failing  # the send only
    answers_saved = [p for p in found.points if p.said and p.said["code"] == "resume_writes"]
    assert len(answers_saved) == 3, found.points  # each answer a crash point, recovered right
    with pytest.raises(LabError, match="asked for answer 3 .* resumes gives 2"):
        explore(target("age_question.py", "graph"), "graph", resumes=["forty", 40])
    with pytest.raises(LabError, match="resumes must be a list of answers in order"):
        explore(target("age_question.py", "graph"), "graph", resumes="forty")
    with pytest.raises(LabError, match="an answer of resumes must be a JSON value"):
        explore(target("age_question.py", "graph"), "graph", resumes=[{1}])


def test_a_static_breakpoint_is_resumed_as_an_interrupt_is():
    """Item 9: `interrupt_before=["tools"]` stops the run before its tool; the explorer goes
    on past it, so the tool's booking is the run's effect, and every crash point recovers."""
    found = explore(target("breakpoint_tools.py", "build"), "graph", restart_at="day")
    assert found.clean["bookings.db"]["bookings"] == [["12A"]], found.clean
    assert found.green, found.failing


def test_a_graphs_config_reaches_its_tools_and_a_bad_one_is_one_line():
    """Item 8: the tutorial's tools read configurable.passenger_id; given --config, they run,
    in the run and in every recovery; without it, the run without a crash fails."""
    config = {"configurable": {"passenger_id": "3442 587242"}}
    found = explore(target("passenger_tools.py", "graph"), "graph", config=config)
    assert found.clean["bookings.db"]["bookings"] == [["3442 587242", "12A"]], found.clean
    assert {p.outcome for p in found.failing} <= {"duplicate"}
    with pytest.raises(RunFailed, match="No passenger ID configured"):
        explore(target("passenger_tools.py", "graph"), "graph")
    with pytest.raises(LabError, match="config must be a dict such as"):
        explore(target("passenger_tools.py", "graph"), "graph", config=["passenger"])


def test_each_worker_has_the_timeout_the_reader_gives():
    """Item 16: a node that takes 2 s fails the run without a crash under timeout=1, and
    explores under the default; a timeout that is not a number is one line."""
    with pytest.raises(RunFailed, match="timed out"):
        explore(target("slow_node.py", "graph"), "graph", timeout=1, restart_at="day")
    with pytest.raises(LabError, match="timeout must be a number above 0"):
        explore(target("slow_node.py", "graph"), "graph", timeout="60")


def test_a_graph_whose_node_is_a_runnable_with_fallbacks_is_explored():
    """Item 10: asking a `.with_fallbacks` tool node for its function raises NameError inside
    LangChain; the explorer's look at the nodes must not fail a graph that invoke runs."""
    found = explore(target("fallback_tool.py", "graph"), "graph", restart_at="day")
    assert found.green, found.failing
    assert found.crash_points > 0


@pytest.mark.parametrize("kind", ["step", "callable"])
def test_a_graph_named_as_another_kind_is_told_which_kind_to_use(kind):
    """Item 15: a StateGraph (or a function that builds one) given as a step or a callable is
    bad input in one line that names --kind graph, not "'StateGraph' object is not callable"."""
    for name in ("graph", "build"):
        file = "approve_tool.py" if name == "graph" else "breakpoint_tools.py"
        with pytest.raises(LabError, match=r"explore it as a graph \(--kind graph"):
            explore(target(file, name), kind)


def test_a_module_that_imports_its_sibling_runs_with_the_folder_opted_in():
    """Item 11: `path=` (--path DIR) puts the folder on the workers' import path; without it,
    as before, the sibling is not found; a path that is no folder is one line."""
    with pytest.raises(RunFailed, match="No module named 'sibling_helper'"):
        explore(target("sibling_import.py", "step"), restart_at="day")
    found = explore(target("sibling_import.py", "step"), restart_at="now,day,hash", path=OUTSIDE)
    assert found.green, found.failing
    with pytest.raises(LabError, match="path must be a folder for the import path"):
        explore(target("sibling_import.py", "step"), path=OUTSIDE / "sibling_helper.py")


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_a_graph_of_async_nodes_is_run_with_ainvoke_and_each_commit_is_a_crash_point(durability):
    """Item 12: `async def` nodes (an aiosqlite write, a sqlite3 write, an interrupt answered
    with a dict) run as their reader runs them, with `ainvoke`; the window after each commit
    is found, at the reader's line: where the commit is in the reader's thread, and, for
    aiosqlite's (its own thread), where the node awaits it; the same graph gives the same
    matrix twice."""
    approve = {"action": "approve"}
    found = explore(
        target("async_nodes.py", "graph"), "graph", resume=approve, durability=durability
    )
    assert found.clean["payments.db"]["refunds"] == [[10]], found.clean
    assert found.clean["receipts.db"]["receipts"] == [["refunded 10"]], found.clean
    failing = {(p.op, p.detail, p.outcome) for p in found.failing}
    assert failing == {
        ("commit", "payments.db", "duplicate"),
        ("commit", "receipts.db", "duplicate"),
    }
    receipt_line = next(p.where for p in found.failing if p.detail == "receipts.db")
    assert receipt_line == "async_nodes.py:33", receipt_line  # the `with` that commits
    refund_line = next(p.where for p in found.failing if p.detail == "payments.db")
    assert refund_line == "async_nodes.py:28", refund_line  # `await db.commit()`
    nodes = [p for p in found.points if (p.said or {}).get("code") == "node_writes"]
    writes = {p.said["name"]: p.where for p in nodes}  # each node's own `async def` line
    lines = {
        "review": "async_nodes.py:18",
        "refund": "async_nodes.py:23",
        "receipt": "async_nodes.py:32",
    }
    assert writes == {"__start__": None, **lines}, writes
    again = explore(
        target("async_nodes.py", "graph"), "graph", resume=approve, durability=durability
    )
    assert [(p.n, p.op, p.detail, p.outcome) for p in again.points] == [
        (p.n, p.op, p.detail, p.outcome) for p in found.points
    ]


def test_under_async_durability_every_crash_state_is_replayed_twice_and_the_summary_says_so(
    tmp_path,
):
    """Item 13: LangGraph's async saves run in a thread, so a row can differ from run to run:
    each crash state is replayed a second time (its own folders), a row whose replays disagree
    is marked, and the summary tells CI to assert green, not rows. A sync run is replayed once."""
    found = explore(LINEAR, "graph", durability="async", restart_at="now", out=tmp_path / "a")
    firsts = {p.n for p in found.points if p.n is not None and p.same_as is None}
    again = {int(f.name.split("-")[1]) for f in (tmp_path / "a" / "again").glob("point-*")}
    assert again == firsts  # a second replay of each, in a folder of its own
    assert "so a row can change from run to run" in found.summary()
    assert found.summary().count("(varies)") == sum(p.varies for p in found.points)
    synced = explore(LINEAR, "graph", restart_at="now", out=tmp_path / "s")
    assert not (tmp_path / "s" / "again").exists() and "run to run" not in synced.summary()


def test_two_replays_that_disagree_show_the_failing_one_marked():
    from labkit.studies.explorer.replay import compared
    from labkit.studies.explorer.report import PointResult

    def row(outcome: str) -> PointResult:
        return PointResult(3, "put", "checkpoint", None, outcome, None, "/x")

    shown = compared(row("consistent"), [{3: row("duplicate")}])
    assert (shown.outcome, shown.varies) == ("duplicate", True)
    shown = compared(row("lost"), [{3: row("consistent")}])
    assert (shown.outcome, shown.varies) == ("lost", True)
    assert not compared(row("duplicate"), [{3: row("duplicate")}]).varies
    assert not compared(row("duplicate"), []).varies  # replayed once


def test_a_verdict_is_shown_before_not_judged_whichever_recovery_gave_it():
    """A crash state's restarts, or its two replays: a row that says what is wrong beats one
    that no checker could judge (a shelf's bytes differ), which beats a consistent one."""
    from labkit.studies.explorer.replay import compared
    from labkit.studies.explorer.replays import worst
    from labkit.studies.explorer.report import PointResult

    def row(outcome: str, restart: str = "day") -> PointResult:
        return PointResult(3, "write", "miles.dat", None, outcome, None, "/x", restart=restart)

    restarts = ("day", "month")
    assert worst([row("not_judged"), row("duplicate", "month")], restarts).outcome == "duplicate"
    assert worst([row("consistent"), row("not_judged", "month")], restarts).outcome == (
        "not_judged"
    )
    shown = compared(row("not_judged"), [{3: row("lost")}])
    assert (shown.outcome, shown.varies) == ("lost", True)
    shown = compared(row("consistent"), [{3: row("not_judged")}])
    assert (shown.outcome, shown.varies) == ("not_judged", True)


def test_the_command_line_takes_answers_in_order_by_repeating_resume(tmp_path):
    """Item 7 on the CLI: `--resume` once answers every interrupt; given more than once, the
    answers go in order, as `resumes` does."""
    args = ["--resume", '"forty"', "--resume", "40", "--resume", '"ana@example.com"']
    done = subprocess.run(
        [sys.executable, "-m", "labkit", "explore", target("age_question.py", "graph")]
        + ["--kind", "graph", "--restart-at", "now", *args, "--json", "--out", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr  # a failing point: status 1
    found = json.loads(done.stdout)
    assert found["spec"]["resumes"] == ["forty", 40, "ana@example.com"], found["spec"]
    assert [p["outcome"] for p in found["points"] if p["outcome"] != "consistent"] == ["duplicate"]


@pytest.mark.parametrize("name", ["parent", "own"])
def test_a_graphs_recovery_runs_under_another_pid_and_parent_than_the_killed_process(name):
    """A graph's crash state is made by a process that runs to the point under a parent of its
    own (the recording's fork, or a worker that runs to it), so each recovery, forked from the
    server, has another pid and parent without a fork of its own: a key of either changes
    across the restart, and the duplicate is found."""
    found = explore(target("process_keys.py", name), "graph", restart_at="now,day")
    *_, insert = [p for p in found.points if p.op == "commit"]  # after the CREATE TABLE's
    row = found.point(insert.n)
    assert (row.outcome, row.restart) == ("duplicate", "now"), found.summary()
