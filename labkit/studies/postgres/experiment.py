"""Lesson 7 from the kernel's side: check the reader's choice, ask the trial server, get results.

The kernel never imports psycopg or LangGraph: every run happens in the trial server, which
starts labkit's own Postgres on first use (one per kernel, reused by every run after) unless
the reader names a server of theirs (`postgres_url=`, or $LABKIT_POSTGRES_URL).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from labkit.bench import server
from labkit.bench.errors import check_folder
from labkit.bench.folders import check_run_dir
from labkit.bench.postgres import given_url
from labkit.studies.postgres.spec import (
    CrashResult,
    CrashSpec,
    RaceResult,
    RaceSpec,
    WindowResult,
    WindowSpec,
)

__all__ = ["crash_sweep", "run_crash", "run_race", "run_window", "server_guard", "window_sweep"]

RUNS = "labkit.studies.postgres.runs"
CRASHES = "labkit.studies.postgres.crashes"


def checked_out(out: Path | str | None, prefix: str, deepest: str = "") -> str | None:
    """`out` checked before the trial server starts (it would find a bad one late)."""
    out = check_folder("out", out)
    check_run_dir(out, prefix, deepest=deepest)
    return str(out) if out else None


def run_window(
    order: str = "effect_first",
    kill_at: str = "effect",
    out: Path | str | None = None,
    postgres_url: str | None = None,
    step_source: str | None = None,
) -> WindowResult:
    """The commit window on Postgres: SIGKILL the worker at `kill_at`, recover, count rows."""
    spec = WindowSpec(order, kill_at, step_source)
    url = given_url(postgres_url)
    result = server.call(
        f"{RUNS}:run_window",
        spec=spec.to_json(),
        out=checked_out(out, "pg-window-"),
        postgres_url=url,
    )
    return WindowResult.from_json(result)


def window_sweep(
    out: Path | str | None = None, postgres_url: str | None = None
) -> list[WindowResult]:
    """Every order at every kill point (eight runs)."""
    url = given_url(postgres_url)
    results = server.call(
        f"{RUNS}:window_sweep",
        out=checked_out(out, "pg-window-sweep-", "one_transaction.in_transaction"),
        postgres_url=url,
    )
    return [WindowResult.from_json(r) for r in results]


def run_race(
    lock: str = "for_update",
    out: Path | str | None = None,
    postgres_url: str | None = None,
    step_source: str | None = None,
    hold: str | None = None,
) -> RaceResult:
    """Two workers run the one-transaction step at once: does `lock` keep it to one receipt?
    The first is held at `hold` (RaceSpec.held_at) until the second waits or ends."""
    spec = RaceSpec(lock, step_source, hold)
    url = given_url(postgres_url)
    result = server.call(
        f"{RUNS}:run_race", spec=spec.to_json(), out=checked_out(out, "pg-race-"), postgres_url=url
    )
    return RaceResult.from_json(result)


def run_crash(point: str = "commit_in_flight", out: Path | str | None = None) -> CrashResult:
    """SIGKILL a Postgres server of the run's own while the client's COMMIT is at `point`,
    restart it, and read what survived. Always labkit's own server: it is killed."""
    spec = CrashSpec(point)
    result = server.call(
        f"{CRASHES}:run_crash", spec=spec.to_json(), out=checked_out(out, "pg-crash-")
    )
    return CrashResult.from_json(result)


def crash_sweep(
    out: Path | str | None = None, progress: Callable[[int, int, object], None] | None = None
) -> list[CrashResult]:
    """The crash at each of its four points, each in its own folder under `out`, the four
    servers side by side (none is a race: each is its own); `progress(done, total, None)` as
    each crash is read back."""
    results = server.call(
        f"{CRASHES}:crash_sweep",
        progress,
        out=checked_out(out, "pg-crash-sweep-", "commit_in_flight"),
    )
    return [CrashResult.from_json(r) for r in results]


def server_guard(progress: Callable[[int, int, object], None] | None = None) -> dict:
    """Read from labkit's own server what keeps another user of the machine out of it (it
    starts on first use); `progress(done, 3, None)` as each step ends (`runs.server_guard`)."""
    return server.call(f"{RUNS}:server_guard", progress)
