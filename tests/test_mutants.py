"""Tests that fail when the product breaks (issue 33): each one was run against the one small
wrong change the issue names (a mutant) and failed, and passes without it.

1. the explorer's checker must call a recovery that did not finish "lost", even when every
   table holds as many rows as the run without a crash (only done=0 tells);
2. lesson 2's judge must refuse a step that did not reach its kill point the second time, and
   one whose commit it could not see;
4. a reader's step that never says done is "unfinished" (and with two receipts "duplicate"),
   and what the files hold is said in the lessons' words (the mutants mutmut left there);
6. `no_leftover_workers` sees a worker that ended but was never reaped (a zombie).

Items 3 and 5 live beside their kin: tests/test_runs_home.py (a group-writable runs home) and
tests/test_interrupts.py (the receiver's race, forced with a gate).
"""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import pytest
from conftest import leftover_workers, unreaped_workers

import labkit as lk
from labkit.bench.snapshot import Snapshot, Table
from labkit.language import say
from labkit.studies.commit_window.outcome import classify
from labkit.studies.commit_window.runs import order_worker
from labkit.studies.commit_window.stores import KEY, PAYLOAD, create_files
from labkit.studies.explorer.checker import CrashState, default_checker
from labkit.studies.explorer.replay import explore
from labkit.views.commit_window_words import (
    describe_state,
    order_summary,
    outcome_name,
    outcome_text,
)
from labkit.workshop import lesson2, lesson9

# A step whose retry sees its receipt and returns without mark_done: every table holds as many
# rows after recovery as without a crash, but done stays 0.
SEES_ITS_RECEIPT_AND_STOPS = """
def step(control, effect, gate):
    with effect:
        if effect.db.execute("SELECT count(*) FROM receipts").fetchone()[0]:
            return  # its receipt is there: it returns, and never says done
        effect.add_receipt_once(KEY, PAYLOAD)
    with control:
        control.mark_done()
"""


# --- 1. the explorer's checker: "recovery did not finish the run"


def test_the_default_checker_calls_an_unfinished_recovery_lost_when_the_rows_agree():
    """Every row as the run without a crash left it, but the recovery did not finish: only the
    'did not finish' check can tell (the content check sees nothing wrong)."""
    done = {"control.db": {"progress": [[1, 1]]}, "effect.db": {"receipts": [[1, "k", "p"]]}}
    point = {"n": 1, "op": "commit", "detail": "effect.db", "where": "steps.py:5"}
    unfinished = CrashState(point, done, done, done, finished=False)
    assert default_checker(unfinished) == "lost: recovery did not finish the run"
    assert default_checker(CrashState(point, done, done, done, finished=True)) is None


def test_a_step_whose_retry_stops_at_its_receipt_is_lost_in_the_matrix_and_in_lesson_9(
    tmp_path,
):
    (tmp_path / "sees.py").write_text(
        "from labkit.studies.commit_window.stores import KEY, PAYLOAD\n"
        + SEES_ITS_RECEIPT_AND_STOPS
    )
    found = explore(f"{tmp_path}/sees.py:step", out=tmp_path / "x")
    assert not found.green, found.summary()
    # done stays 0: the content check sees it first, where the rows once agreed (issue 25)
    said = "inconsistent: control.db table progress holds [null, 0] where the run without a crash"
    assert [(p.n, p.complaint.startswith(said)) for p in found.failing] == [(1, True)]
    verdict = lesson9.green_matrix.check(SEES_ITS_RECEIPT_AND_STOPS)
    assert verdict.status == "incorrect", str(verdict)
    assert "control.db table progress holds [null, 0]" in verdict.message


# --- 2. lesson 2's judge: a step that did not reach its kill point, a commit it did not see


def test_a_step_that_commits_another_way_when_run_again_is_not_the_same(tmp_path):
    """Effect first on its first run (which the judge numbers the points of), checkpoint first
    on every later one: killed at `after commit 1 (effect.db)` it never gets there, exits 0,
    and its files look right. The judge must say it did not reach that point."""
    runs = tmp_path / "runs"
    step = f"""def my_step(control, effect, gate):
    import posix  # below the names the lab watches: a write outside the run folder it can't see
    seen = posix.open({str(runs)!r}, posix.O_RDWR | posix.O_CREAT | posix.O_APPEND)
    first = posix.read(seen, 1) == b""
    posix.write(seen, b"x")
    if first:
        with effect:
            effect.add_receipt_once(KEY, PAYLOAD)
        with control:
            control.mark_done()
    else:
        with control:
            control.mark_done()
        with effect:
            effect.add_receipt_once(KEY, PAYLOAD)
"""
    verdict = lesson2.safe_step.check(step)
    assert verdict.status == "incorrect", str(verdict)
    assert "`after commit 1 (effect.db)`" in verdict.message
    why = say("lesson2.step.not_reached")
    assert verdict.message.endswith(say("lesson2.step.not_the_same", at="", why=why))


def test_a_commit_the_watch_never_saw_is_refused(tmp_path):
    """Done=1 written through a cursor, then os._exit(0) before anything else runs: no kill
    point followed that commit, so the judge cannot have crashed the step there."""
    step = """def my_step(control, effect, gate):
    import os
    with effect:
        effect.add_receipt_once(KEY, PAYLOAD)
    control.db.cursor().execute("UPDATE progress SET done=1 WHERE id=1")
    os._exit(0)
"""
    verdict = lesson2.safe_step.check(step)
    assert verdict.status == "incorrect", str(verdict)
    why = say("lesson2.step.no_commit_seen", name="control.db")
    assert verdict.message == say("lesson2.step.unwatched", why=why)


# --- 4. the outcome "unfinished", reached by a reader's step through the public API


def a_readers_run(order: str, step: str, kill_at: str, out: Path) -> lk.RunResult:
    source = textwrap.dedent(step)
    return lk.execute(lk.RunSpec(order, kill_at, out=out, step_source=source, step_name="step"))


def test_a_readers_step_that_stops_at_its_receipt_recovers_unfinished(tmp_path):
    r = a_readers_run(
        "idempotent", SEES_ITS_RECEIPT_AND_STOPS, "after commit 1 (effect.db)", tmp_path / "run"
    )
    assert r.failure is None and r.first.exit_code == 91, r.summary()
    assert (r.after.done, r.after.receipts) == (0, 1)
    assert r.outcome == "unfinished"
    assert outcome_name("unfinished") in describe_state(r.after)


def test_a_step_that_never_says_done_is_unfinished_and_with_two_receipts_a_duplicate(tmp_path):
    """Recovery runs a step again while done=0: with the receiver's key it still holds one
    receipt (unfinished); without, two, and two receipts are a duplicate whatever done says."""
    never_done = """
    def step(control, effect, gate):
        with effect:
            effect.add_receipt{once}(KEY, PAYLOAD)
    """
    keyed = a_readers_run("idempotent", never_done.format(once="_once"), "none", tmp_path / "k")
    assert (keyed.after.done, keyed.after.receipts, keyed.outcome) == (0, 1, "unfinished")
    plain = a_readers_run("effect_first", never_done.format(once=""), "none", tmp_path / "p")
    assert (plain.after.done, plain.after.receipts, plain.outcome) == (0, 2, "duplicate")


def files_holding(done: int, receipts: int) -> Snapshot:
    """A snapshot of study 000's two files, as `take_snapshot` reads them."""
    rows = [[n, KEY, PAYLOAD] for n in range(1, receipts + 1)]
    return Snapshot(
        {
            "control.db": {"progress": Table(["id", "done"], [[1, done]])},
            "effect.db": {"receipts": Table(["id", "op_key", "payload"], rows)},
        }
    )


@pytest.mark.parametrize(
    ("done", "receipts", "said"),
    [
        (1, 1, "done=1 and 1 receipt (consistent)"),
        (1, 0, "done=1 and 0 receipts (lost)"),
        (1, 2, "done=1 and 2 receipts (duplicate)"),
        (0, 0, "done=0 and 0 receipts (unfinished)"),
        (0, 2, "done=0 and 2 receipts (duplicate)"),
    ],
)
def test_what_the_files_hold_is_said_in_the_lessons_words(done, receipts, said):
    """The words of every verdict of lessons 1 and 2 ("when the files held ...")."""
    assert describe_state(files_holding(done, receipts)) == said


def test_each_write_order_is_summed_up_in_its_own_words():
    """What `labkit orders` and lesson 1's table say each order does (the mutant the
    2026-12-05 run of commit_window_words.py left: no guard read it)."""
    summaries = {name: order_summary(order) for name, order in lk.ORDERS.items()}
    assert summaries == {
        "effect_first": "commit the receipt in effect.db, then done=1 in control.db",
        "checkpoint_first": "commit done=1 in control.db, then the receipt in effect.db",
        "atomic": "receipt and done=1 in one transaction on one file",
        "idempotent": "effect first, but the receiver keeps one receipt per operation key",
    }


def test_a_failed_run_claims_no_outcome_and_says_why():
    two = files_holding(1, 2)
    assert (classify(two, None), classify(two, "first worker timed out")) == ("duplicate", "failed")
    assert outcome_text("duplicate", None) == "duplicate"
    assert outcome_text("failed", "first worker timed out") == "failed: first worker timed out"


# --- 6. no_leftover_workers sees a worker nobody reaped


def test_no_leftover_workers_sees_a_worker_that_ended_unreaped(tmp_path):
    order = lk.get_order("atomic")
    create_files(tmp_path, order.files, order.receiver_dedupes)
    zombies_before = unreaped_workers()
    worker = order_worker(lk.RunSpec("atomic"), tmp_path, "first")
    worker.start()
    try:
        pid = worker.proc.pid
        deadline = time.monotonic() + 10
        while pid not in unreaped_workers() and time.monotonic() < deadline:
            time.sleep(0.02)  # it runs to its end; nobody waits for it
        assert pid in unreaped_workers(), "the worker never ended"
        assert not (Path(f"/proc/{pid}/cmdline").read_bytes())  # its command line is gone
        assert leftover_workers(tmp_path, zombies_before) == [pid]
    finally:
        worker.close()  # reaps it
    assert leftover_workers(tmp_path, zombies_before) == []
