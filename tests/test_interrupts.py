"""Study 001 with real graphs in real processes, and the ticket service's contract."""

from __future__ import annotations

from pathlib import Path

import pytest

from labkit.bench.launcher import WorkerProcess
from labkit.bench.snapshot import read_tables
from labkit.bench.tickets import PayloadConflict, Tickets
from labkit.studies.interrupt_resume.experiment import run_interrupt
from labkit.studies.interrupt_resume.race import reached, run_ticket_race


@pytest.mark.parametrize(
    ("key", "after", "receipts"), [("fresh", 2, [1, 2]), ("stable", 1, [1, 1])]
)
def test_study_001_table_in_one_process(key, after, receipts):
    r = run_interrupt(key)
    assert (r["node_calls"], r["before_resume"], r["after_resume"]) == (2, 1, after)
    assert r["receipts"] == receipts and r["exits"] == {"study": 0}


@pytest.mark.parametrize(("key", "after"), [("fresh", 2), ("stable", 1)])
def test_the_node_runs_again_in_a_fresh_process(key, after):
    r = run_interrupt(key, cross_process=True)
    assert (r["node_calls"], r["before_resume"], r["after_resume"]) == (2, 1, after)
    assert r["resume"]["found"]["next"] == ["create_and_review"]
    assert "receipt_review" in r["resume"]["found"]["interrupts"][0]
    newest = r["resume"]["checkpoints"]["checkpoints"][0]
    assert newest["next"] == ["create_and_review"] and newest["interrupts"]


# (layout, kill point) -> (node runs that created or fetched a ticket, tickets with a fresh key)
KILLS = {
    ("combined", "before_create"): (2, 2),
    ("combined", "after_create"): (3, 3),
    ("combined", "paused"): (2, 2),
    ("split", "before_create"): (1, 1),
    ("split", "after_create"): (2, 2),
    ("split", "paused"): (1, 1),
}


@pytest.mark.parametrize("key", ["fresh", "stable"])
@pytest.mark.parametrize(("layout", "kill_at"), list(KILLS))
def test_every_kill_point_for_both_keys_and_layouts(layout, kill_at, key):
    r = run_interrupt(key, layout, cross_process=True, kill_at=kill_at)
    calls, fresh_tickets = KILLS[(layout, kill_at)]
    assert -9 in r["exits"].values()  # a real SIGKILL happened
    assert list(r["exits"].values())[-1] == 0  # and a fresh process finished the thread
    assert r["node_calls"] == calls
    assert r["after_resume"] == (fresh_tickets if key == "fresh" else 1)
    assert len(set(r["receipts"])) == (fresh_tickets if key == "fresh" else 1)


@pytest.mark.parametrize(("kill_at", "tickets"), [("before_create", 0), ("after_create", 1)])
def test_a_mark_committed_before_the_ticket_loses_it_to_a_kill_between_the_two(kill_at, tickets):
    """mark_first's execute commits its mark, then asks for the ticket: a re-run that finds the
    mark skips, so a kill between the two loses the ticket, and a kill after both keeps one."""
    r = run_interrupt("stable", "mark_first", cross_process=True, kill_at=kill_at)
    assert r["exits"] == {"first": 0, "resume": -9, "recover": 0}  # killed in execute, recovered
    assert len(r["tickets"]) == tickets  # the ticket service's rows, read back
    assert r["outcome"] == ("lost" if tickets == 0 else "consistent")
    assert r["recover"]["receipt_seen"] is False  # the recovery skipped execute either way
    marks = read_tables(Path(r["run_dir"]) / "filed.db")["filed"].rows
    assert marks == [["request-42/create-ticket/v1"]]


def test_the_receiver_contract(tmp_path):
    tickets = Tickets(tmp_path)
    first = tickets.create("team-A", "op-1", "A")
    assert tickets.create("team-A", "op-1", "A") == first
    before = tickets.rows()
    with pytest.raises(PayloadConflict):
        tickets.create("team-A", "op-1", "changed")
    assert tickets.rows() == before  # refused, and nothing changed
    assert tickets.create("team-A", "op-2", "A") != first
    assert tickets.create("team-B", "op-1", "A") != first  # another tenant, its own ticket
    assert len(tickets.rows()) == 3


def test_a_ticket_holds_its_canonical_payload_and_is_found_by_tenant_and_key(tmp_path):
    tickets = Tickets(tmp_path)
    passed: list[str] = []
    first = tickets.create("team-A", "op-1", "A", {"b": 1, "a": "é"}, gate=passed.append)
    assert passed == ["read"]  # between its look-up and its insert
    assert tickets.rows() == [(first, "team-A", "op-1", '{"a": "é", "b": 1, "title": "A"}')]
    assert tickets.create("team-A", "op-1", "A", {"a": "é", "b": 1}) == first  # any order
    assert (tickets.find("team-A", "op-1"), tickets.find("team-B", "op-1")) == (first, None)
    assert tickets.find("team-A", "op-2") is None
    second = tickets.create("team-A", "op-2", "B")
    assert (second, tickets.find("team-A", "op-2")) == (2, 2)


def test_a_payload_conflict_says_what_is_held_and_what_was_sent(tmp_path):
    tickets = Tickets(tmp_path)
    tickets.create("team-A", "op-1", "A")
    with pytest.raises(PayloadConflict) as refused:
        tickets.create("team-A", "op-1", "B")
    held, sent = '{"title": "A"}', '{"title": "B"}'
    assert (str(refused.value), refused.value.held, refused.value.sent) == (
        f"team-A/op-1 already holds {held}, not {sent}",
        held,
        sent,
    )


def test_two_processes_racing_with_one_key_leave_one_ticket(tmp_path):
    """The interleaving that makes two tickets, forced with the gate: the first racer stops
    between its look-up and its insert ("read"), the second is let go then. With BEGIN
    IMMEDIATE it cannot even read until the first has written; a plain BEGIN would let both
    read "no ticket" before either writes (issue 33, item 5), every time, not by chance."""
    job = {"tenant": "team-A", "op_key": "op-race", "title": "same"}
    racers = [
        WorkerProcess(
            tmp_path,
            f"racer{i}",
            "labkit.bench.tickets:create_when_told",
            job,
            pause_at=("ready", "read"),
        )
        for i in (1, 2)
    ]
    first, second = racers
    try:
        for racer in racers:
            racer.start()
            assert racer.wait_for_pause() == "ready"
        first.resume()
        assert first.wait_for_pause() == "read"  # it has looked, and not written yet
        second.resume()  # a BEGIN and a SELECT away from "read", unless the first holds it off
        assert not reached(tmp_path, "racer2", "read", within=2.0), (
            "the second racer read the receiver while the first was between its read and write"
        )
        first.resume()
        assert first.wait() == 0
        assert second.wait_for_pause() == "read"  # only now: after the first one's commit
        second.resume()
        assert second.wait() == 0
    finally:
        for racer in racers:
            racer.close()
    ids = {racer.report().stdout.strip() for racer in racers}
    assert ids == {"1"} and Tickets(tmp_path).rows() == [
        (1, "team-A", "op-race", '{"title": "same"}')
    ]
    assert reached(tmp_path, "racer2", "read", within=0.1)  # its trace names it: the check saw


def test_lesson_3_runs_the_race_and_the_second_process_gets_the_first_ticket(tmp_path):
    """The cell of lesson 3 that runs study 001 §06: the second racer is held off while the
    first stands between its look-up and its insert, and both come back with ticket 1."""
    race = run_ticket_race(str(tmp_path / "race"))
    assert race.held_off
    assert race.ids == {"racer1": "1", "racer2": "1"}
    assert [row[:3] for row in race.tickets] == [(1, "team-A", "op-race")]
