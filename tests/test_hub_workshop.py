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
