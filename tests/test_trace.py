"""The trace records what happened, in order, from every process, durably."""

from __future__ import annotations

import labkit as lk
from labkit.bench.trace import read_trace


def events(run_dir, role=None):
    return [
        (e["event"], e.get("file") or e.get("point"))
        for e in read_trace(run_dir)
        if role is None or e["role"] == role
    ]


def test_effect_first_trace_shows_the_commit_window_and_the_kill(tmp_path):
    result = lk.run("effect_first", "effect", "sigkill", out=tmp_path / "run")
    trace = read_trace(result.run_dir)
    assert events(result.run_dir, "first") == [
        ("start", None),
        ("point", "start"),
        ("begin", "effect.db"),
        ("commit", "effect.db"),
        ("point", "effect"),
        ("kill", "effect"),
    ]
    kill = next(e for e in trace if e["event"] == "kill")
    assert kill["pid"] == result.first.pid and kill["mode"] == "sigkill"
    assert events(result.run_dir, "recovery")[-3:] == [
        ("commit", "control.db"),
        ("point", "checkpoint"),
        ("exit", None),
    ]
    times = [e["t_ns"] for e in trace]
    assert times == sorted(times)
    assert {e["pid"] for e in trace if e["role"] == "recovery"} == {result.recovery.pid}


def test_commit_events_carry_the_rows_they_wrote(tmp_path):
    result = lk.run("atomic", out=tmp_path / "run")
    commits = [e for e in read_trace(result.run_dir) if e["event"] == "commit"]
    assert len(commits) == 1 and commits[0]["file"] == "control.db"
    assert [w["table"] for w in commits[0]["writes"]] == ["receipts", "progress"]


def test_exit_mode_kill_is_written_by_the_worker_itself(tmp_path):
    result = lk.run("checkpoint_first", "checkpoint", "exit", out=tmp_path / "run")
    kill = [e for e in read_trace(result.run_dir) if e["event"] == "kill"]
    assert kill == [dict(kill[0], pid=result.first.pid, mode="exit", code=91, point="checkpoint")]
    assert "skip" in [e["event"] for e in read_trace(result.run_dir) if e["role"] == "recovery"]


def test_the_timeline_history_refuses_a_trace_that_disagrees_with_the_files(tmp_path):
    import sqlite3

    import pytest

    from labkit.bench.snapshot import snapshot_folder
    from labkit.studies.commit_window.history import HistoryMismatch, rebuild_history

    result = lk.run("effect_first", "effect", out=tmp_path / "run")
    frames = rebuild_history(read_trace(result.run_dir), result.after)
    assert frames[-1].rows["effect.db"]["receipts"] == result.after.table("receipts").rows
    db = sqlite3.connect(result.run_dir / "effect.db")  # a write the trace never saw
    db.execute("DELETE FROM receipts WHERE id = 2")
    db.commit()
    db.close()
    with pytest.raises(HistoryMismatch):
        rebuild_history(read_trace(result.run_dir), snapshot_folder(result.run_dir))


def test_a_commit_window_needs_commits_to_both_stores_or_a_kill_between_them(tmp_path):
    from labkit.views.timeline import commit_windows

    def windows(order):
        result = lk.run(order, "effect", out=tmp_path / order)
        return [(w["role"], w["open"]) for w in commit_windows(read_trace(result.run_dir))]

    # The first worker is killed between its two commits; recovery commits both, in order.
    assert windows("effect_first") == [("first", True), ("recovery", False)]
    # Recovery finds the receipt already there and commits only the checkpoint: no window.
    assert windows("idempotent") == [("first", True)]


def test_the_legend_tells_an_open_window_from_a_closed_one_without_colour(tmp_path):
    from labkit.views.timeline import TimelineFigure

    result = lk.run("effect_first", "effect", out=tmp_path / "run")
    figure = TimelineFigure(read_trace(result.run_dir)).fig
    legend = figure.legends[0]
    spans = {
        text.get_text(): handle.get_hatch()
        for text, handle in zip(legend.get_texts(), legend.legend_handles, strict=True)
        if "commit window" in text.get_text()
    }
    assert spans == {
        "commit window, left open by the kill": "///",
        "commit window, closed by the second commit": None,
    }
