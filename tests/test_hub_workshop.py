"""The workshop load test, small: two simulated participants on a real hub run lesson 1 in
their own kernels at once (benchmarks/bench_workshop.py; larger rooms on demand, figures in
notebooks/INSTRUCTOR_GUIDE.md). It runs in CI's `python3 tasks.py test` as root."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_workshop.py"

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the hub makes system users: root only"),
    pytest.mark.skipif(not shutil.which("npm"), reason="the hub's proxy comes from npm"),
    pytest.mark.timeout(900),
]


def test_two_participants_run_lesson_1_at_once_each_right_and_walled_off(tmp_path):
    out = tmp_path / "room.json"
    done = subprocess.run(
        [sys.executable, str(BENCH), "--participants", "2", "--lessons", "1", "--json", out],
        capture_output=True, text=True, timeout=800,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    room = json.loads(out.read_text())
    assert room["participants"] == 2 and len(room["each"]) == 2
    for person in room["each"]:
        lesson = person["lessons"]["1"]
        assert lesson["right"] and lesson["errors"] == []
        assert lesson["found"]["effect_first@effect"] == "duplicate"
        assert lesson["cpu_s"] > 0 and 0 < lesson["p50_s"] <= lesson["p95_s"]
        # the peak is a sample: the server and the kernel always, the workers when one ran then
        assert 50 < person["peak_pss_mb"] < 2000 and person["peak_processes"] >= 2
        assert person["at_peak_mb"]["server"] > 0 and person["at_peak_mb"]["kernel"] > 0
        doors = person["doors"]
        assert len(doors) >= 6 and "reached" not in doors.values(), doors
    names = [person["name"] for person in room["each"]]
    assert not {u.pw_name for u in pwd.getpwall()} & set(names)  # removed after the run
    assert "2 participants, lessons 1" in done.stdout


def test_under_the_hub_lesson_7s_crash_sweep_runs_one_server_at_a_time(monkeypatch, tmp_path):
    """The hub sets LABKIT_CRASH_SERVERS_AT_ONCE=1 (a participant's peak held four Postgres
    servers at once); the sweep then crashes them one by one, its progress still 1..4 of 4."""
    from labkit.hub.config import ONE_SERVER
    from labkit.studies.postgres import crashes

    batches, said = [], []

    def crashed(specs, folders, step):  # the servers' part, left out: what each batch holds
        batches.append(len(specs))
        step(len(specs), len(specs), None)
        return [spec.point for spec in specs]

    monkeypatch.setattr(crashes, "crashes", crashed)
    [(name, value)] = ONE_SERVER.items()
    monkeypatch.setenv(name, value)
    done = crashes.crash_sweep(str(tmp_path / "sweep"), lambda n, total, item: said.append(n))
    assert batches == [1, 1, 1, 1] and said == [1, 2, 3, 4] and len(done) == 4
    monkeypatch.delenv(crashes.AT_ONCE)
    batches.clear()
    crashes.crash_sweep(str(tmp_path / "together"), lambda n, total, item: None)
    assert batches == [4]  # elsewhere, side by side as before
