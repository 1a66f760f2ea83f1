"""The benchmarks still run (a smoke test with few trials; the figures are in benchmarks/README)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def bench(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=BENCHMARKS,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_engine_benchmark_prints_its_ratio_and_sweep_time():
    out = bench("bench_engine.py", "--rounds", "1")
    assert "ratio trial / two bare starts" in out and "whole sweep, exit mode" in out


def test_call_benchmark_prints_its_ratio_and_sweep_time():
    out = bench("bench_call.py", "--rounds", "1")
    assert "ratio call / SQLite trial" in out and "whole call sweep, 20 trials" in out


def test_durability_benchmark_prints_its_ratio_and_matrix_time():
    out = bench("bench_durability.py", "--rounds", "1", "--forked", "3", "--matrix-rounds", "1")
    assert "ratio fresh / forked" in out and "24-kill matrix" in out
    assert "ratio trial / clean run" in out and "ratio matrix / clean run" in out
    assert "a new file here now:" in out  # the figures' condition: files deleted just before


def test_trial_anatomy_prints_each_part_of_both_calls():
    out = bench("bench_trial_anatomy.py", "--runs", "2")
    assert out.splitlines()[1].startswith("a new file here now:"), out
    rows = {line[:48].strip(): line[48:].split() for line in out.splitlines()[3:10]}
    assert list(rows)[0] == "the call, until node a starts" and len(rows) == 7, out
    # the parts only a trial has: no figure for the clean run, a positive one for the trial
    for part in ("c starts -> the kill (a pause, a freeze)", "the kill -> c starts again"):
        clean, trial = next(row for what, row in rows.items() if what.startswith(part))
        assert clean == "-" and float(trial) > 0, out
    assert "ratio of the calls' medians" in out


def test_soak_runs_every_kind_of_trial_and_finds_nothing_left():
    out = bench("soak.py", "--trials", "5")  # one of each kind
    assert out.startswith("soak: 5 trials") and out.rstrip().endswith(": OK"), out


def test_leases_benchmark_prints_its_ratio_and_sweep_time():
    out = bench("bench_leases.py", "--rounds", "1")
    assert "ratio race / SQLite trial" in out and "whole claim sweep, 15 races" in out


def test_cells_benchmark_times_a_lessons_code_cells():
    lesson = BENCHMARKS.parent / "notebooks" / "01_the_commit_window.ipynb"
    out = bench("bench_cells.py", str(lesson), "--top", "1")
    assert "code cells" in out and "01_the_commit_window" in out


def test_postgres_benchmark_prints_its_ratios_server_starts_and_put_times():
    out = bench("bench_postgres.py", "--rounds", "1", "--puts", "1")
    assert "ratio Postgres / SQLite trial" in out and "restart after SIGKILL" in out
    assert "put() postgres" in out and "put() stub_250ms" in out


def test_explorer_benchmark_prints_both_figures():
    out = bench("bench_explorer.py", "--rounds", "1", "--commits", "3")
    assert "linear graph (sync), every crash point" in out and "crash states/s" in out


def test_explorer_start_benchmark_prints_cold_and_warm():
    out = bench("bench_explorer_start.py", "--rounds", "1")
    assert "cold shell, lesson 2's step" in out and "x warm; target < 2x" in out
    assert "tutorial-shaped graph, warm" in out


def test_run_all_benchmark_reads_each_cells_time_as_jupyterlab_recorded_it(tmp_path):
    """bench_run_all.py drives a real browser (minutes): here only what it reads of the copy
    JupyterLab saved, each cell's execute_input to execute_reply, slowest first."""
    sys.path.insert(0, str(BENCHMARKS))
    from bench_run_all import slowest

    def cell(source: str, begun: str, ended: str, outputs: list) -> dict:
        stamps = {"iopub.execute_input": begun, "shell.execute_reply": ended}
        metadata = {"execution": stamps}
        return {"cell_type": "code", "source": source, "metadata": metadata, "outputs": outputs}

    at = "2026-12-05T09:00:{}Z".format
    raised = [{"output_type": "error", "ename": "KeyError"}]
    cells = [
        cell("quick()\n", at("00.000"), at("00.250"), []),
        {"cell_type": "markdown", "source": "words", "metadata": {}},
        cell("# a comment\nslow()", at("01.000"), at("13.500"), raised),
    ]
    notebook = tmp_path / "lesson.ipynb"
    notebook.write_text(json.dumps({"cells": cells}))
    assert slowest(notebook) == ([(12.5, "# a comment"), (0.25, "quick()")], 1)


def test_prune_benchmark_prints_both_ways_and_their_ratio():
    out = bench("bench_prune.py", "--runs", "5", "--files", "3")
    assert "sizes read from the markers" in out and "every run walked" in out
    assert "ratio walked / read" in out
