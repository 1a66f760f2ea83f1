"""Study 000's five cases, with real processes and real kills, in both kill modes."""

from __future__ import annotations

import json

import pytest

import labkit as lk

# (order, kill point, done/receipts before recovery, done/receipts after, outcome): study 000
STUDY_000 = [
    ("effect_first", "effect", (0, 1), (1, 2), "duplicate"),
    ("checkpoint_first", "checkpoint", (1, 0), (1, 0), "lost"),
    ("atomic", "in_transaction", (0, 0), (1, 1), "consistent"),
    ("atomic", "committed", (1, 1), (1, 1), "consistent"),
    ("idempotent", "effect", (0, 1), (1, 1), "consistent"),
]
FIRST_EXIT = {"exit": 91, "sigkill": -9}


@pytest.mark.parametrize("kill_mode", lk.KILL_MODES)
@pytest.mark.parametrize(("order", "kill_at", "before", "after", "outcome"), STUDY_000)
def test_study_000_table(
    tmp_path, no_leftover_workers, order, kill_at, before, after, outcome, kill_mode
):
    result = lk.run(order, kill_at, kill_mode, out=tmp_path / "run")
    summary = result.summary()
    assert (summary["before"]["done"], summary["before"]["receipts"]) == before
    assert (summary["after"]["done"], summary["after"]["receipts"]) == after
    assert summary["first_exit"] == FIRST_EXIT[kill_mode]
    assert summary["replay_exit"] == 0
    assert summary["outcome"] == outcome
    assert result.first.killed_at == kill_at


def test_run_folder_keeps_everything(tmp_path):
    result = lk.run("effect_first", "effect", out=tmp_path / "run")
    names = {p.name for p in (tmp_path / "run").iterdir()}
    assert {
        "control.db",
        "effect.db",
        "trace.jsonl",
        "before.json",
        "after.json",
        "results.json",
        "first.stdout",
        "first.stderr",
        "recovery.stdout",
        "recovery.stderr",
    } <= names
    saved = json.loads((tmp_path / "run" / "results.json").read_text())
    assert saved["outcome"] == "duplicate"
    assert saved["first"]["pid"] == result.first.pid != saved["recovery"]["pid"]
    receipts = saved["snapshots"]["after"]["files"]["effect.db"]["receipts"]["rows"]
    assert [row[0] for row in receipts] == [1, 2]  # two rows, read back from the file


EVERY_KILL_POINT = [(o.name, p) for o in lk.ORDERS.values() for p in o.kill_points]


@pytest.mark.parametrize(("order", "kill_at"), EVERY_KILL_POINT)
def test_both_kill_modes_leave_the_same_files(tmp_path, order, kill_at):
    by_exit = lk.run(order, kill_at, "exit", out=tmp_path / "exit")
    by_signal = lk.run(order, kill_at, "sigkill", out=tmp_path / "sigkill")
    assert by_exit.before.to_json() == by_signal.before.to_json()
    assert by_exit.after.to_json() == by_signal.after.to_json()


def test_idempotent_recovery_gets_the_original_receipt(tmp_path):
    result = lk.run("idempotent", "effect", out=tmp_path / "run")
    assert result.before.table("receipts").rows == result.after.table("receipts").rows
    assert result.after.table("receipts").rows == [[1, "job-17:save-report:v1", "demo-report-17"]]


def test_the_study_table_puts_the_studys_figures_beside_each_real_run(tmp_path):
    from dataclasses import replace

    from labkit.views.tables import study_table_html

    assert {(o, k): (b, a) for o, k, b, a, _ in STUDY_000} == lk.STUDY_000_REPORTED
    repeated = lk.run("effect_first", "effect", out=tmp_path / "run")
    html = study_table_html([repeated])
    assert "0 / 1 → 1 / 2" in html and ">same<" in html and "differs" not in html
    # the same files, filed under another case: the table must say they disagree with the study
    mislabelled = replace(repeated, spec=lk.RunSpec("checkpoint_first", "checkpoint"))
    assert ">differs<" in study_table_html([mislabelled])


def test_os_exit_skips_finally_and_sys_exit_runs_it(tmp_path):
    """Study 000's point, run (issue 29, item 7): both exit 91, only sys.exit's finally ran."""
    seen = lk.compare_exits(out=tmp_path / "exits")
    assert seen["os._exit"]["exit_status"] == seen["sys.exit"]["exit_status"] == 91
    assert seen["os._exit"]["log_lines"] == ["before the exit"]
    assert seen["sys.exit"]["log_lines"] == ["before the exit", "in finally"]
