"""Lesson 7's runs as the trial server runs them (the story: `studies.postgres.experiment`).

Every run gets a schema of its own on the server (labkit's own, or the reader's URL), its
workers are forked from the trial server, and what a run claims is read back from Postgres
through a new connection: committed rows only. The database crashes: `studies.postgres.crashes`.
"""

from __future__ import annotations

import os
import pwd
import stat
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

from labkit.bench.failures import FAILED, failing_run, first_failure
from labkit.bench.failures import failure as failed_so
from labkit.bench.folders import keep_json, new_run_dir
from labkit.bench.launcher import WorkerProcess
from labkit.bench.postgres import connect, given_url, new_schema, redacted, shared_url
from labkit.bench.trace import read_trace
from labkit.hub.room_postgres import PASSFILE as ROOM_PASSFILE
from labkit.studies.postgres.spec import (
    NO_KILL,
    WINDOW_ORDERS,
    RaceResult,
    RaceSpec,
    WindowResult,
    WindowSpec,
    outcome_of,
)
from labkit.studies.postgres.stores import (
    WINDOW_TABLES,
    activity_name,
    counts,
    other_receipts,
)

__all__ = ["run_race", "run_window", "server_guard", "window_sweep"]

WORKERS = "labkit.studies.postgres.workers"
TIMEOUT = 30.0  # seconds for any worker: a step takes milliseconds
SEEN_TIMEOUT = 10.0  # seconds to wait for Postgres to show a worker where the run needs it


def worker(run_dir: Path, role: str, entry: str, job: dict, **plan: object) -> WorkerProcess:
    return WorkerProcess(
        run_dir, role, f"{WORKERS}:{entry}", job, timeout=TIMEOUT, start_mode="fork", **plan
    )


def prepare(run_dir: Path, postgres_url: str | None) -> tuple[str, str]:
    """The server's URL and a new schema for this run, with the window's tables in it."""
    url = postgres_url or shared_url()
    schema = new_schema(url, run_dir)
    with connect(url, schema) as conn:
        conn.execute(WINDOW_TABLES)
    keep_json(run_dir, postgres={"server": redacted(url), "schema": schema})
    return url, schema


def read_counts(url: str, schema: str) -> dict:
    with connect(url, schema) as conn:
        return counts(conn)


def read_after(url: str, schema: str) -> tuple[dict, list[list]]:
    """What a window run left: its counts, and the receipts of other values, through one
    connection."""
    with connect(url, schema) as conn:
        return counts(conn), other_receipts(conn)


def run_window(spec: dict, out: str | None = None, postgres_url: str | None = None) -> WindowResult:
    """One commit-window run: the first worker SIGKILLed at the kill point (or not), a fresh
    worker recovers, and both counts come from Postgres."""
    spec = WindowSpec(**spec)
    run_dir = new_run_dir(out, prefix="pg-window-")
    with failing_run(run_dir):
        url, schema = prepare(run_dir, postgres_url)
        job = {**spec.to_json(), "postgres_url": url, "schema": schema}
        planned = None if spec.kill_at == NO_KILL else spec.kill_at
        with worker(run_dir, "first", "run_step", job, pause_at=(spec.kill_at,)) as first:
            first.finish(kill_at=planned)
        before = read_counts(url, schema)
        with worker(run_dir, "recovery", "run_step", job) as recovery:
            recovery.wait()
        after, other = read_after(url, schema)
        failure = first_failure([(first.report(), planned), (recovery.report(), None)])
        result = WindowResult(
            spec=spec,
            run_dir=str(run_dir),
            schema=schema,
            before=before,
            after=after,
            outcome=FAILED if failure else outcome_of(**after),
            first_exit=first.proc.returncode,
            recovery_exit=recovery.proc.returncode,
            events=read_trace(run_dir),
            failure=failure,
            other_receipts=other,
        )
        keep_json(run_dir, results={k: v for k, v in result.to_json().items() if k != "events"})
        return result


def window_sweep(out: str | None = None, postgres_url: str | None = None) -> list[WindowResult]:
    """Every order at every kill point, each run in its own folder under `out`."""
    root = new_run_dir(out, prefix="pg-window-sweep-")
    return [
        run_window({"order": order, "kill_at": point}, str(root / f"{order}.{point}"), postgres_url)
        for order, points in WINDOW_ORDERS.items()
        for point in points
    ]


def run_race(spec: dict, out: str | None = None, postgres_url: str | None = None) -> RaceResult:
    """Two workers run the one-transaction step at once. The first stops at its hold point (by
    default inside its transaction, its writes made, not committed); the second starts and runs
    freely (held back, it could hold a lock the first then waits for); once Postgres shows it
    waiting on a lock, or it has finished, the first goes on, and Postgres decides the rest."""
    spec = RaceSpec(**spec)
    run_dir = new_run_dir(out, prefix="pg-race-")
    with failing_run(run_dir):
        url, schema = prepare(run_dir, postgres_url)
        job = {"order": "one_transaction", **spec.to_json(), "postgres_url": url, "schema": schema}
        hold = spec.held_at()
        with worker(run_dir, "first", "run_step", job, pause_at=(hold,)) as first:
            held = first.wait_for_pause() == hold
            with worker(run_dir, "second", "run_step", job) as second:
                waited_on = wait_for_second(url, run_dir, schema) if held else None
                if held:
                    first.resume()
                first.wait()
                second.wait()
        after = read_counts(url, schema)
        failure = first_failure([(first.report(), None), (second.report(), None)])
        if not held and not failure:
            failure = failed_so("never_reached", "first", point=hold)  # no transaction to hold
        result = RaceResult(
            spec=spec,
            run_dir=str(run_dir),
            schema=schema,
            second_waited=waited_on is not None,
            reports={
                "first": what_it_did(run_dir, "first"),
                "second": what_it_did(run_dir, "second"),
                "second_waited_at": waited_on,
            },
            receipts=after["receipts"],
            done=after["done"],
            outcome=FAILED if failure else outcome_of(**after),
            failure=failure,
        )
        keep_json(run_dir, results=result.to_json())
        return result


def wait_for_second(url: str, run_dir: Path, schema: str) -> str | None:
    """The statement the second worker of this run (its `schema`) waits at on a row lock, as
    Postgres shows it; None if it ended without waiting (nothing stopped it). Another run's
    second on the same server is not this one's (tests race side by side on one server)."""
    deadline = time.monotonic() + SEEN_TIMEOUT
    with connect(url) as conn:
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT query FROM pg_stat_activity WHERE application_name = %s"
                " AND wait_event_type = 'Lock'",
                (activity_name("second", schema),),
            ).fetchone()
            if row:
                return row[0].strip()
            if any(e["role"] == "second" and e["event"] == "exit" for e in read_trace(run_dir)):
                return None
            time.sleep(0.005)
    return None


def what_it_did(run_dir: Path, role: str) -> list[str]:
    """A worker's step as codes, in order, from its trace: "retried" (a serialization failure)
    for each retry, then "skipped" (done=1 already) or "wrote" (a receipt and done=1); or
    ["nothing"]. A view says them in the reader's words (postgres.toml's [did])."""
    mine = [e for e in read_trace(run_dir) if e["role"] == role]
    did = ["retried" for e in mine if e["event"] == "retry"]
    if any(e["event"] == "skip" for e in mine):
        did.append("skipped")
    elif any(e["event"] == "commit" and e.get("writes") for e in mine):
        did.append("wrote")
    return did or ["nothing"]


def server_guard(progress: Callable | None = None) -> dict:
    """What keeps another user of this machine out of the server lesson 7 runs on, read from
    the server itself: where it listens, how every connection authenticates, whom it runs as,
    and what a client that knows everything but the password is told. The server is labkit's
    own (made and started on first use), or, under the workshop hub, the room's shared one
    (`room_url`): no server of the participant's own is started for the question.
    `progress(done, 3, None)`: the trial server up, the server up, all read."""
    import psycopg

    step = progress or (lambda done, total, item: None)
    step(1, 3, None)
    url = room_url() or shared_url()
    step(2, 3, None)
    with connect(url) as conn:
        listens = conn.execute("SHOW listen_addresses").fetchone()[0]
        socket_mode = conn.execute("SHOW unix_socket_permissions").fetchone()[0]
        methods = conn.execute(
            "SELECT DISTINCT auth_method FROM pg_hba_file_rules ORDER BY auth_method"
        ).fetchall()
        runs_as = server_user(conn)
    query = parse_qs(urlsplit(url).query)
    password_file = Path(query["passfile"][0])
    try:
        psycopg.connect(without_passfile(url), connect_timeout=10).close()
        without = "connected"
    except psycopg.OperationalError as error:
        without = str(error).strip().splitlines()[0].rsplit(": ", 1)[-1]
    guard = {
        "network": listens or None,
        "socket_mode": socket_mode,
        "auth": [method for (method,) in methods],
        "runs_as": runs_as,
        "you": pwd.getpwuid(os.getuid()).pw_name,
        "password_file_mode": f"{stat.S_IMODE(password_file.stat().st_mode):04o}",
        "without_password": without,
    }
    step(3, 3, None)
    return guard


def room_url() -> str | None:
    """The room's shared server, when the workshop hub gave this participant one
    ($LABKIT_POSTGRES_URL naming the room's password file), else None."""
    url = given_url()
    if not url:
        return None
    passfile = parse_qs(urlsplit(url).query).get("passfile", [""])[0]
    return url if Path(passfile).name == ROOM_PASSFILE else None


def server_user(conn) -> str:
    """Whom the server runs as: the owner of its data folder (labkit's own server), or, where
    a participant's role may not read that setting (the room's), of the backend serving us."""
    import psycopg

    try:
        data = Path(conn.execute("SHOW data_directory").fetchone()[0])
        return pwd.getpwuid(data.stat().st_uid).pw_name
    except psycopg.errors.InsufficientPrivilege:
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        return pwd.getpwuid(Path(f"/proc/{pid}").stat().st_uid).pw_name


def without_passfile(url: str) -> str:
    """The URL with its password file left out: everything a stranger could know."""
    parts = urlsplit(url)
    query = [(k, v) for k, vs in parse_qs(parts.query).items() for v in vs if k != "passfile"]
    return parts._replace(query=urlencode(query, safe="/")).geturl()
