"""The restarted world (labkit.bench.restart): a retry runs in a child under a new parent, its
clocks moved on (a day and an hour; a judged retry's, into another year, month, day, hour and
minute), and its parent ends exactly as the child ends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from labkit.bench.launcher import LABKIT_ROOT, isolated_python
from labkit.bench.restart import LATER, RETRY_DELAY

RESTARTED = f"""
import datetime, json, os, sys, time
sys.path.insert(0, {LABKIT_ROOT!r})
from labkit.bench.restart import restart_here
before = {{"pid": os.getpid(), "time": time.time(), "day": str(datetime.date.today())}}
restart_here(restart_seconds)
print(json.dumps({{
    "before": before, "pid": os.getpid(), "ppid": os.getppid(),
    "attempt": os.environ.get("LABKIT_ATTEMPT"),
    "clocks": [time.time(), time.time_ns() / 1e9, time.mktime(time.localtime()),
               time.mktime(time.strptime(time.strftime("%Y-%m-%d %H:%M:%S"), "%Y-%m-%d %H:%M:%S")),
               time.clock_gettime(time.CLOCK_REALTIME), datetime.datetime.now().timestamp(),
               time.mktime(time.strptime(time.ctime()))],
    "day": str(datetime.date.today()),
    "cpu": time.clock_gettime(time.CLOCK_PROCESS_CPUTIME_ID),
}}), flush=True)
"""


def restarted(then: str, seconds: float = LATER) -> subprocess.CompletedProcess:
    code = RESTARTED.replace("restart_seconds", repr(seconds)) + then
    return subprocess.run(isolated_python("-c", code), capture_output=True, text=True, timeout=20)


def test_a_restarted_process_has_a_new_parent_moved_clocks_and_the_next_attempt():
    done = restarted("sys.exit(3)")
    assert done.returncode == 3, done.stderr  # the parent ends with the child's exit code
    seen = json.loads(done.stdout)
    assert seen["ppid"] == seen["before"]["pid"] != seen["pid"]
    assert seen["attempt"] == "2"
    for clock in seen["clocks"]:
        assert LATER - 5 < clock - seen["before"]["time"] < LATER + 60, seen["clocks"]
    assert seen["day"] != seen["before"]["day"] and seen["cpu"] < 60  # CPU time is not moved


ZONES = (
    "UTC",
    "Asia/Shanghai",  # UTC+8: its midnight is UTC's afternoon before
    "Asia/Kolkata",  # +5:30
    "Asia/Kathmandu",  # +5:45
    "America/Los_Angeles",  # summer time
    "Europe/Berlin",
    "Australia/Lord_Howe",  # a summer time of half an hour
    "Pacific/Kiritimati",  # +14
)
FIELDS = ("year", "month", "day", "hour", "minute", "weekday")


def test_a_judged_retry_comes_in_another_year_month_day_hour_minute_and_weekday_everywhere():
    """Every 97 minutes over four years (leap days, year ends, summer times), in zones ahead of
    UTC, behind it and off the hour: no field of the local time, nor of UTC, comes back."""
    start = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
    moments = [start + n * 97 * 60 for n in range(4 * 365 * 24 * 60 // 97)]
    for zone in map(ZoneInfo, ZONES):
        for moment in moments:
            now, then = (datetime.fromtimestamp(t, zone) for t in (moment, moment + RETRY_DELAY))
            same = [f for f in FIELDS if field(now, f) == field(then, f)]
            assert not same, (str(zone), now, then, same)


def field(moment: datetime, name: str) -> int:
    return moment.weekday() if name == "weekday" else getattr(moment, name)


def test_a_restart_after_the_retry_delay_reads_another_month_and_year():
    done = restarted("", RETRY_DELAY)
    seen = json.loads(done.stdout)
    before, after = seen["before"]["day"], seen["day"]
    assert after[:4] != before[:4] and after[5:7] != before[5:7], (before, after)


def test_a_child_killed_by_a_signal_reads_as_killed_to_the_launcher():
    assert restarted("os.kill(os.getpid(), 9)").returncode == -signal.SIGKILL
    assert restarted("os.kill(os.getpid(), 15)").returncode == -signal.SIGTERM


def test_the_child_dies_with_the_process_the_launcher_started():
    code = RESTARTED.replace("restart_seconds", "0") + "time.sleep(30)"
    with subprocess.Popen(isolated_python("-c", code), stdout=subprocess.PIPE, text=True) as outer:
        child = json.loads(outer.stdout.readline())["pid"]
        outer.kill()
        outer.wait()
        deadline = time.monotonic() + 5
        while os.path.exists(f"/proc/{child}") and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not os.path.exists(f"/proc/{child}")


def test_the_trace_keeps_the_real_clock_in_a_restarted_worker(tmp_path):
    import labkit as lk
    from labkit.bench.trace import read_trace

    step = "def my_step(control, effect, gate):\n    effect.add_receipt_once(KEY, PAYLOAD)\n"
    spec = lk.RunSpec("idempotent", step_source=step, step_name="my_step", out=tmp_path / "run")
    result = lk.execute(spec)
    starts = {e["role"]: e for e in read_trace(result.run_dir) if e["event"] == "start"}
    assert starts["recovery"]["pid"] != result.recovery.pid  # the retry ran in the child
    assert 0 < starts["recovery"]["t_ns"] - starts["first"]["t_ns"] < 60e9
