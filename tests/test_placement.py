"""Study 004's advice run (lesson 4): the same effect (a ticket under a new UUID) placed first,
in the middle or last of the linear graph, explored at every crash point under each durability
mode. Real LangGraph workers, real SIGKILLs; the tickets are read back here from each point's
folder, through a connection of our own, beside what the placement module says."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from chinese import assert_no_english

import labkit as lk
from labkit.studies.explorer.placement import explore_placements
from labkit.views.explorer_words import crash_after
from labkit.views.placement import legend, placement_html, placement_lines, strip, window_line


def tickets(run_dir: str) -> int:
    path = Path(run_dir) / "tickets.db"
    if not path.exists():
        return 0
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute("SELECT count(*) FROM ticket").fetchone()[0]
    except sqlite3.OperationalError:  # killed before the table was made
        return 0
    finally:
        db.close()


@pytest.fixture(scope="module")
def placed():
    lk.set_language("en")
    rows = explore_placements(("first", "last"), ("sync", "exit"))
    return {(r.placement, r.mode): r for r in rows}


def test_under_sync_the_window_is_the_effect_nodes_own_wherever_it_is(placed):
    first, last = placed["first", "sync"], placed["last", "sync"]
    assert len(first.fates) == len(last.fates) == 21  # 11 saves, 8 ledger lines, 2 commits
    assert first.window == [6, 7] and last.window == [18, 19]
    for row in (first, last):
        assert [row.fates[n - 1] for n in row.window] == ["duplicate", "duplicate"]
        assert row.count("consistent") == 19
        crashes = [p for p in row.exploration.points if p.n is not None]
        for point in crashes:  # two tickets exactly where the fate says the effect ran twice
            assert tickets(point.run_dir) == (2 if point.n in row.window else 1)
    # what closes the last node's window: its own saved writes, not the end of the run
    assert window_line(last).endswith("until put_writes writes of node d")
    closing = last.exploration.point(20)
    assert crash_after(closing) == "put_writes writes of node d"


def test_under_exit_last_orphans_the_effect_at_fewer_points(placed):
    first, last = placed["first", "exit"], placed["last", "exit"]
    assert strip(first) == "LLOOOOOOOO·"
    assert strip(last) == "LLLLLLLLOO·"
    for row in (first, last):
        crashes = [p for p in row.exploration.points if p.n is not None]
        for point, fate in zip(crashes, row.fates, strict=True):
            made = tickets(point.run_dir)
            assert made == {"orphaned": 1, "lost_before": 0, "consistent": 1}[fate], point.n
    lines = placement_lines(list(placed.values()))
    assert (
        "exit: crash points that repeat or orphan the effect: first 8 of 11, last 2 of 11" in lines
    )
    assert (
        "sync: crash points that repeat or orphan the effect: first 2 of 21, last 2 of 21" in lines
    )


def test_in_chinese_the_table_the_strips_and_the_lines_hold_no_english(placed):
    rows = list(placed.values())
    lk.set_language("zh")
    try:
        shown = "\n".join(
            [placement_html(rows), legend(), *placement_lines(rows), window_line(rows[-1])]
        )
    finally:
        lk.set_language("en")
    # node d's name is the English mark D in another case: the strips are checked as they are
    allowed = ["D"]
    assert_no_english(shown, ["placement", "explorer"], ["placement.", "explorer.verb."], allowed)
    assert "丢丢丢丢丢丢丢丢孤孤·" in shown and "·····重重····" in shown  # Chinese marks


def test_bad_input_is_one_line_naming_the_choices():
    from labkit.bench.errors import LabError

    with pytest.raises(LabError, match="choose one of: first, middle, last"):
        explore_placements(("top",))
    with pytest.raises(LabError, match="choose one of: sync, async, exit"):
        explore_placements(("last",), ("syncc",))
    with pytest.raises(LabError, match="give a list of placement names, from: first, middle, last"):
        explore_placements("last")
