"""The restarted world (labkit.bench.restart): a retry runs in a child under a new parent, its
clocks moved on (a day and an hour; a judged retry's, into another year, month, day, hour and
minute), and its parent ends exactly as the child ends."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from labkit.bench.launcher import LABKIT_ROOT, isolated_python
from labkit.bench.restart import LATER, RETRY_ADDRESS, RETRY_DELAY, RETRY_NODE, seconds_until
from labkit.studies.explorer.replay import explore

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


def test_a_recovery_a_day_later_comes_at_another_minute_and_second():
    """The month's and the year's restarts come at 01:00:00: in the first minute of an hour,
    only the day's could tell a key of the minute alone from the attempt's, and it kept the
    minute (such a key was green then). Every second of a day, in UTC and in local time."""
    start = datetime(2026, 3, 28, tzinfo=UTC).timestamp()
    for moment in range(int(start), int(start) + 86_400):
        for clock in (time.gmtime, time.localtime):
            now, then = clock(moment), clock(moment + seconds_until("day", moment))
            assert now.tm_min != then.tm_min and now.tm_sec != then.tm_sec, (now, then)


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


def test_the_explorers_month_and_year_restarts_change_them_in_local_time_and_utc_everywhere(
    monkeypatch,
):
    """The explorer's restart "in the next month" comes where a key of the month changes read
    in local time and in UTC alike (in Shanghai, an hour into the 1st is still the last day of
    the month in UTC), and "in the next year" where a key of the year changes, its ISO year
    (`%G`, `isocalendar()`) too: every 7 hours over four years, in zones ahead of UTC, behind
    it and off the hour."""
    start = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
    moments = [start + n * 7 * 3600 for n in range(4 * 365 * 24 // 7)]
    try:
        for name in (*ZONES, "Etc/GMT+12"):  # and UTC-12, the zone furthest behind
            monkeypatch.setenv("TZ", name)
            time.tzset()
            zone = ZoneInfo(name)
            for moment in moments:
                for restart, keys in (("month", MONTH_KEYS), ("year", YEAR_KEYS)):
                    later = moment + seconds_until(restart, moment)
                    now, then = (datetime.fromtimestamp(t, zone) for t in (moment, later))
                    same = [key for key, read in keys.items() if read(now) == read(then)]
                    assert not same and then - now < timedelta(days=400), (name, now, then, same)
    finally:
        monkeypatch.undo()
        time.tzset()


MONTH_KEYS = {
    "local month": lambda moment: f"{moment:%Y-%m}",
    "UTC month": lambda moment: f"{moment.astimezone(UTC):%Y-%m}",
}
YEAR_KEYS = {
    "local year": lambda moment: moment.year,
    "UTC year": lambda moment: moment.astimezone(UTC).year,
    "local ISO year": lambda moment: moment.isocalendar().year,
    "UTC ISO year": lambda moment: moment.astimezone(UTC).isocalendar().year,
}


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


SQLITE_NOW = f"""
import json, sqlite3, sys, time
sys.path.insert(0, {LABKIT_ROOT!r})
from labkit.bench.restart import RETRY_DELAY, restart_here
before = time.time()
restart_here(RETRY_DELAY)
moved = time.time()
time.time = lambda: moved  # one moment for every read below
db = sqlite3.connect(":memory:")
db.execute("CREATE TABLE t (x, at DEFAULT CURRENT_TIMESTAMP)")
db.execute("INSERT INTO t (x) VALUES (1)")
class Mine(sqlite3.Connection): pass
class FromSqlitesOwn(sqlite3.Connection.__mro__[-2]): pass
opened = [db, Mine(":memory:"), sqlite3.connect(":memory:", factory=Mine),
          sqlite3.connect(":memory:", factory=FromSqlitesOwn)]
print(json.dumps({{
    "before": before, "moved": moved,
    "said": {{sql: db.execute("SELECT " + sql).fetchone()[0] for sql in json.loads(sys.argv[1])}},
    "default": db.execute("SELECT at FROM t").fetchone()[0],
    "each": [c.execute("SELECT datetime()").fetchone()[0] for c in opened],
}}))
"""
ZONE = "Asia/Shanghai"  # UTC+8: 'localtime' is another hour, and after 16:00 UTC another day


def sqlite_expected(moment: float) -> dict:
    """What SQLite says at `moment` (its 'now' is kept to the millisecond), worked out in
    Python: each function and keyword, with modifiers, and time values of their own."""
    ms = int(moment * 1000)
    utc = datetime.fromtimestamp(ms // 1000, UTC)
    local = utc.astimezone(ZoneInfo(ZONE))
    return {
        "date('now')": f"{utc:%Y-%m-%d}",
        "date()": f"{utc:%Y-%m-%d}",
        "time('NOW')": f"{utc:%H:%M:%S}",
        "datetime('now')": f"{utc:%Y-%m-%d %H:%M:%S}",
        "datetime('Now', '+1 day')": f"{utc + timedelta(days=1):%Y-%m-%d %H:%M:%S}",
        "datetime('now', 'localtime')": f"{local:%Y-%m-%d %H:%M:%S}",
        "date('now', 'localtime', 'start of month', '+1 day')": f"{local:%Y-%m}-02",
        "julianday('now')": ms / 86_400_000 + 2_440_587.5,
        "unixepoch('now')": ms // 1000,
        "unixepoch()": ms // 1000,
        "strftime('%Y-%m-%d %H:%M:%f', 'now')": f"{utc:%Y-%m-%d %H:%M:%S}.{ms % 1000:03d}",
        "strftime('%s')": str(ms // 1000),
        "CURRENT_TIMESTAMP": f"{utc:%Y-%m-%d %H:%M:%S}",
        "CURRENT_DATE": f"{utc:%Y-%m-%d}",
        "CURRENT_TIME": f"{utc:%H:%M:%S}",
        "date('2024-02-29', '+1 year')": "2025-03-01",  # a time value of its own: not moved
        "strftime('%s', '2024-01-01 08:00', 'utc')": "1704067200",  # 08:00 in Shanghai
        "datetime(1704067200, 'unixepoch')": "2024-01-01 00:00:00",
        "strftime('%Y', 'nowhere')": None,  # not 'now': no time at all, as SQLite says
    }


def test_sqlites_own_clock_is_moved_in_every_function_keyword_and_connection():
    """date('now'), CURRENT_TIMESTAMP and the rest read the restarted process's clock, with
    SQLite's own meaning for every modifier; a time value of the code's own is not moved."""
    sqls = list(sqlite_expected(0))
    done = subprocess.run(
        isolated_python("-c", SQLITE_NOW, json.dumps(sqls)),
        capture_output=True,
        text=True,
        timeout=20,
        env={**os.environ, "TZ": ZONE},
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert RETRY_DELAY - 5 < seen["moved"] - seen["before"] < RETRY_DELAY + 60
    expected = sqlite_expected(seen["moved"])
    assert seen["said"] == {
        **expected,
        "julianday('now')": pytest.approx(expected["julianday('now')"], abs=1e-8),
    }
    assert seen["default"] == expected["CURRENT_TIMESTAMP"]  # a column's DEFAULT too
    # connect, a subclass of sqlite3.Connection, it as a factory, a factory of SQLite's own
    assert seen["each"] == [expected["datetime('now')"]] * 4


HOST_READS = f"""
import json, os, platform, socket, sys, uuid
sys.path.insert(0, {LABKIT_ROOT!r})
from labkit.bench.restart import move_host
def reads():
    return {{
        "socket.gethostname()": socket.gethostname(),
        "socket.getfqdn()": socket.getfqdn(),
        "os.uname().nodename": os.uname().nodename,
        "platform.node()": platform.node(),
        "platform.uname().node": platform.uname().node,
        "$HOSTNAME": os.environ["HOSTNAME"],
        "uuid.getnode()": uuid.getnode(),
        "uuid.uuid1().node": uuid.uuid1().node,
        "its address": socket.gethostbyname(socket.gethostname()),
        "its addresses": socket.gethostbyname_ex(socket.gethostname())[2],
        "its address info": socket.getaddrinfo(socket.gethostname(), 80)[0][4],
        "another's address": socket.gethostbyname("localhost"),
    }}
real = reads()  # each read once first: platform and uuid keep what they read
move_host()
print(json.dumps({{"real": real, "moved": reads()}}))
"""


def test_a_judged_retry_reads_another_host_name_and_node_id_everywhere():
    """`move_host` makes the process another machine for every read of its host, cached ones
    too: its name gets "-retry" added and resolves to RETRY_ADDRESS (other names as before), its
    node id is RETRY_NODE, a multicast one (RFC 4122)."""
    done = subprocess.run(
        isolated_python("-c", HOST_READS),
        capture_output=True,
        text=True,
        timeout=20,
        env={**os.environ, "HOSTNAME": socket.gethostname()},
    )
    assert done.returncode == 0, done.stderr
    real, moved = json.loads(done.stdout).values()
    assert moved.pop("another's address") == real.pop("another's address")
    assert [read for read in real if moved[read] == real[read]] == []
    name = f"{real['socket.gethostname()']}-retry"
    names = [read for read in real if ("node" not in read or "name" in read) and "its" not in read]
    assert {moved[read] for read in names} == {name}
    assert moved["uuid.getnode()"] == moved["uuid.uuid1().node"] == RETRY_NODE
    assert moved["its address"] == RETRY_ADDRESS  # no resolver knows the moved name
    assert moved["its addresses"] == [RETRY_ADDRESS]
    assert moved["its address info"] == [RETRY_ADDRESS, 80]
    assert RETRY_NODE & 1 << 40  # the first octet's lowest bit: multicast, no card's address


# Code that saves its host: a step in its receipt, a graph in a row. A recovery on another
# machine would change either: a finding.
LOGS_ITS_HOST = {
    "step": """
import socket

def step(control, effect, gate):
    with effect:
        effect.add_receipt_once("report-17", f"report from {socket.gethostname()}")
    with control:
        control.mark_done()
""",
    "graph": """
import socket, sqlite3
from typing import TypedDict
from langgraph.graph import START, StateGraph

class Report(TypedDict):
    done: bool

def report(state: Report) -> dict:
    with sqlite3.connect("reports.db") as db:
        db.execute("CREATE TABLE IF NOT EXISTS reports (name TEXT PRIMARY KEY, host TEXT)")
        db.execute("REPLACE INTO reports VALUES ('report-17', ?)", (socket.gethostname(),))
    return {"done": True}

graph = StateGraph(Report).add_node("report", report).add_edge(START, "report").compile()
INPUT = {"done": False}
""",
}


@pytest.mark.parametrize("kind", list(LOGS_ITS_HOST))
def test_the_explorers_restarts_keep_the_host(tmp_path, kind):
    """Only a judged retry comes as on another machine (`move_host`): code that saves its host
    is no finding of the explorer, whose recoveries all restart on this one."""
    (tmp_path / "logged.py").write_text(LOGS_ITS_HOST[kind])
    found = explore(f"{tmp_path}/logged.py:{kind}", kind, out=tmp_path / "x")
    assert found.green and len(found.points) > 1, found.summary()
