"""Lesson 7's database crashes as the trial server runs them: the server SIGKILLed under a
commit, restarted on its files, and what survived read back.

A crash starts a Postgres server of its own in the run's folder (it is killed); its data folder
is removed afterwards (30 MB), its log kept. A sweep crashes four servers side by side (or
fewer at a time: `servers_at_once`, under the workshop hub one): no
outcome is a race (each server is its own, and the kill waits until Postgres shows the client
at its point), so the servers start together and stop together. They restart one at a time,
each alone, so that the restart time a crash reports is its own WAL replay.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from labkit.bench.failures import failing_run, first_failure
from labkit.bench.failures import failure as failed_so
from labkit.bench.folders import keep_json, new_run_dir
from labkit.bench.launcher import read_report
from labkit.bench.postgres import LocalServer, connect
from labkit.studies.postgres.runs import SEEN_TIMEOUT, worker
from labkit.studies.postgres.spec import CRASH_POINTS, NO_REPLY, CrashResult, CrashSpec
from labkit.studies.postgres.stores import CRASH_TABLES, HOLD_LOCK, LOCAL_COMMIT

__all__ = ["crash_sweep", "run_crash"]

AT_ONCE = "LABKIT_CRASH_SERVERS_AT_ONCE"
NO_STANDBY = "labkit_no_standby"  # a synchronous standby that never connects: commits wait
RECOVERY_LINES = (  # how the restarted server tells its WAL replay
    "database system was interrupted",
    "database system was not properly shut down",
    "redo starts",
    "redo done",
    "database system is ready",
)
LOG_PREFIX = re.compile(
    r"^\S+ \S+ \S+ \[\d+\] LOG:\s+"
)  # "2026-12-01 13:18:20.945 UTC [23840] LOG:  "
EXPECTED = {  # what pg_stat_activity shows for the client at each point
    "before_commit": {"state": "idle in transaction"},
    "commit_in_flight": {"query": "COMMIT", "wait_event_type": "Lock", "wait_event": "advisory"},
    "commit_flushed": {"query": "COMMIT", "wait_event": "SyncRep"},
    "after_commit": {"state": "idle", "query": "COMMIT"},
}


def run_crash(spec: dict, out: str | None = None) -> CrashResult:
    """The client commits order-1 and order-2, then order-3 up to the crash point; Postgres
    must show it there (pg_stat_activity: the gate's proof); then every process of the server
    is SIGKILLed at once. The server restarts on the same files, replays its WAL, and a new
    connection reads which orders survived."""
    [result] = crashes([CrashSpec(**spec)], [new_run_dir(out, prefix="pg-crash-")])
    return result


def crash_sweep(out: str | None = None, progress: Callable | None = None) -> list[CrashResult]:
    """The crash at each of its four points, each in its own folder under `out`, the four
    servers side by side; `progress` counts the crashes as each is read back."""
    root = new_run_dir(out, prefix="pg-crash-sweep-", deepest="commit_in_flight")
    specs = [CrashSpec(point) for point in CRASH_POINTS]
    folders = [root / spec.point for spec in specs]
    for folder in folders:
        folder.mkdir()
    at_once = servers_at_once(len(specs))
    results: list[CrashResult] = []
    for first in range(0, len(specs), at_once):
        done = len(results)
        step = progress and (lambda n, total, item, done=done: progress(done + n, len(specs), item))
        results += crashes(specs[first : first + at_once], folders[first : first + at_once], step)
    return results


def servers_at_once(count: int) -> int:
    """How many of a sweep's servers run side by side: all `count`, or fewer where
    $LABKIT_CRASH_SERVERS_AT_ONCE says so (the workshop hub says 1: a room's memory counts more
    than a sweep's seconds; four servers together were 60 MB of a participant's peak)."""
    said = os.environ.get(AT_ONCE, "")
    return min(count, int(said)) if said.isdigit() and int(said) > 0 else count


def crashes(
    specs: list[CrashSpec], run_dirs: list[Path], progress: Callable | None = None
) -> list[CrashResult]:
    """Start a server per crash, all at once; crash each under its client; restart each alone
    and read it back; stop them all at once (however this ends), their data folders removed."""
    servers = []
    for run_dir in run_dirs:
        (run_dir / "postgres").mkdir()
        servers.append(
            LocalServer(
                run_dir / "postgres", {"synchronous_standby_names": NO_STANDBY}, copied=True
            )
        )
    with ExitStack() as cleanup:
        cleanup.callback(stop_all, servers)
        for run_dir, server in zip(run_dirs, servers, strict=True):
            with failing_run(run_dir):
                server.launch()
        urls = []
        for run_dir, server in zip(run_dirs, servers, strict=True):
            with failing_run(run_dir):
                urls.append(server.wait_until_ready())
        killed = []
        for spec, run_dir, server, url in zip(specs, run_dirs, servers, urls, strict=True):
            with failing_run(run_dir):
                killed.append(crash_under_client(spec, run_dir, server, url))
        results = []
        for spec, run_dir, server, crash in zip(specs, run_dirs, servers, killed, strict=True):
            with failing_run(run_dir):
                results.append(restart_and_read(spec, run_dir, server, *crash))
            if progress:
                progress(len(results), len(specs), None)
        return results


def stop_all(servers: list[LocalServer]) -> None:
    """Ask every server to shut down at once (SIGINT: its last checkpoint), then wait for each
    and remove its data folder."""
    for server in servers:
        if server.pid is not None:
            server.process.send_signal(signal.SIGINT)
    for server in servers:
        server.stop()
        shutil.rmtree(server.data, ignore_errors=True)


def crash_under_client(
    spec: CrashSpec, run_dir: Path, server: LocalServer, url: str
) -> tuple[object, dict, list[int]]:
    """The client at its point, Postgres seen to show it there, the server killed; the client
    (reaped), what Postgres showed, and the pids killed."""
    with connect(url, options=LOCAL_COMMIT) as admin:
        admin.execute(CRASH_TABLES)
    watcher = connect(
        url, options=LOCAL_COMMIT
    )  # holds the trigger's lock; sees the client in pg_stat_activity
    if spec.point == "commit_in_flight":
        watcher.execute("SELECT pg_advisory_lock(%s)", (HOLD_LOCK,))
    job = {"point": spec.point, "postgres_url": url}
    pauses = ("before_commit", "after_commit")
    with worker(run_dir, "client", "crash_client", job, pause_at=pauses) as client:
        reached = client.wait_for_pause() == "before_commit"
        if reached and spec.point != "before_commit":
            client.resume()
            if spec.point == "after_commit":
                reached = client.wait_for_pause() == "after_commit"
        seen = seen_at(watcher, EXPECTED[spec.point]) if reached else {}
        killed = server.crash() if seen else []
        watcher.close()
        if client.paused_at:  # it goes on: a COMMIT to a dead server, or its end
            client.resume()
        client.wait()
    return client, seen, killed


def restart_and_read(
    spec: CrashSpec, run_dir: Path, server: LocalServer, client: object, seen: dict, killed: list
) -> CrashResult:
    """Restart the killed server on its files, timed, and read which orders survived."""
    log_start = server.log.stat().st_size
    started = time.monotonic()
    url = server.start()
    restart_seconds = time.monotonic() - started
    with connect(url) as conn:
        survived = [row[0] for row in conn.execute("SELECT label FROM orders ORDER BY id")]
    failure = first_failure([(client.report(), None)])
    if not seen and not failure:
        failure = failed_so("client_never_seen", point=spec.point)  # the server was not killed
    saw = read_report(run_dir, "client").get("saw", {})
    result = CrashResult(
        spec=spec,
        run_dir=str(run_dir),
        committed_before=[label for label, word in saw.items() if word == "committed"][:2],
        in_flight="order-3",
        seen_in_flight=seen,
        client_saw=saw.get("order-3", NO_REPLY),
        killed=killed,
        survived=survived,
        recovery_log=recovery_lines(server.log, log_start),
        restart_seconds=round(restart_seconds, 3),
        failure=failure,
    )
    keep_json(run_dir, results=result.to_json())
    return result


def seen_at(conn: object, expected: dict) -> dict:
    """The client's row in pg_stat_activity once it matches `expected`; {} if it never does."""
    deadline = time.monotonic() + SEEN_TIMEOUT
    while time.monotonic() < deadline:
        row = conn.execute(
            "SELECT state, query, wait_event_type, wait_event FROM pg_stat_activity"
            " WHERE application_name = 'labkit-client'"
        ).fetchone()
        if row:
            found = dict(zip(("state", "query", "wait_event_type", "wait_event"), row, strict=True))
            found["query"] = (found["query"] or "").strip()
            if all(found[key] == value for key, value in expected.items()):
                return found
        time.sleep(0.005)
    return {}


def recovery_lines(log: Path, start: int) -> list[str]:
    """The restarted server's own words about its recovery, timestamps and pids left out."""
    with open(log, "rb") as lines:
        lines.seek(start)
        text = lines.read().decode(errors="replace")
    said = [
        LOG_PREFIX.sub("", line).split(" system usage:")[0].strip() for line in text.splitlines()
    ]
    return [line for line in said if line.startswith(RECOVERY_LINES)]
