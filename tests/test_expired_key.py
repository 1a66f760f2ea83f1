"""A key that expired (lesson 2's last part): lesson 2's idempotent step killed at `effect`,
recovered a day and more later by its clocks, against a receiver that keeps keys for a TTL.
Real worker processes, a real SIGKILL; the receipts are read back from effect.db here."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import STDLIB, run_python, worker_imports

import labkit as lk
from labkit.studies.commit_window.expired_key import HOUR, STRIPE_TTL, run_expired_key


def effect_rows(run) -> tuple[list, list]:
    """(receipts, idempotency keys) as effect.db holds them after recovery."""
    db = sqlite3.connect(f"file:{run.run_dir / 'effect.db'}?mode=ro", uri=True)
    try:
        receipts = db.execute("SELECT id, op_key FROM receipts ORDER BY id").fetchall()
        keys = db.execute("SELECT receipt_id, stored_at FROM idempotency_keys").fetchall()
    finally:
        db.close()
    return receipts, keys


def test_recovered_an_hour_later_the_key_is_kept_one_receipt():
    run = run_expired_key(1 * HOUR)
    assert run.failure is None and run.ttl == STRIPE_TTL
    receipts, keys = effect_rows(run)
    assert (run.before.receipts, len(receipts), run.after.done) == (1, 1, 1)
    assert keys == [(1, keys[0][1])] and run.outcome == "consistent"


def test_recovered_25_hours_later_the_key_has_expired_a_second_receipt():
    run = run_expired_key(25 * HOUR)
    assert run.failure is None
    receipts, keys = effect_rows(run)
    assert run.before.receipts == 1
    assert [op_key for _, op_key in receipts] == [lk.KEY, lk.KEY]  # one operation, two receipts
    assert run.outcome == "duplicate" and run.after.done == 1
    [(receipt_id, stored_at)] = keys  # the old key was pruned; the recovery stored it again
    [first_stored] = [row[3] for row in run.before.table("idempotency_keys").rows]
    assert receipt_id == 2 and stored_at - first_stored >= 25 * HOUR  # by the recovery's clock


def test_a_retention_longer_than_the_delay_keeps_one_receipt():
    run = run_expired_key(25 * HOUR, ttl=26 * HOUR)
    assert run.failure is None
    assert (len(effect_rows(run)[0]), run.outcome) == (1, "consistent")


@pytest.mark.parametrize("delay", ["25h", 0, -1, float("inf")])
def test_a_bad_delay_is_one_line(delay):
    with pytest.raises(lk.LabError, match="delay must be a number above 0"):
        run_expired_key(delay)


def test_the_exercise_refuses_a_ttl_equal_to_the_delay_in_chinese(chinese):
    from labkit.workshop import lesson2

    verdict = lesson2.shortest_ttl.check(lesson2.DELAY_HOURS)
    assert verdict.status == "incorrect" and "2 条回执" in verdict.message, str(verdict)
    assert lesson2.shortest_ttl.check(lesson2.DELAY_HOURS + 1).status == "correct"


def test_its_worker_imports_the_standard_library_and_no_language():
    assert worker_imports("labkit.studies.commit_window.expiring") <= STDLIB | {"labkit"}
    module = "labkit.studies.commit_window.expiring"
    loaded = run_python(f"import json, sys, {module}; print(json.dumps(list(sys.modules)))")
    assert "labkit.language" not in loaded and "labkit.bench.launcher" not in loaded
