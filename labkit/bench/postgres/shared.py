"""One server per process that asks (the trial server): started on first use, reused by every
run after, stopped and removed at exit.
"""

from __future__ import annotations

import atexit

from labkit.bench.folders import new_run_dir, outlive_call
from labkit.bench.postgres.local_server import LocalServer, forget

_shared: LocalServer | None = None


def shared_url() -> str:
    """The URL of this process's own server, started (in a run folder of the runs home) on
    first use and reused by every run after. Stopped, and its folder removed, at exit. Its
    data folder is a copy of the process's template (`template_data`), which the crash runs
    copy too: one initdb per process, not two (each took 1.4 s quiet, 8-15 s at load 13-45)."""
    global _shared
    if _shared is None or _shared.pid is None:
        stop_shared()
        server = LocalServer(new_run_dir(None, prefix="postgres-"), copied=True)
        outlive_call(server.folder)  # in use (`clean` leaves it) until the server stops
        try:
            server.start()
        except BaseException:
            server.stop()
            forget(server.folder)
            raise
        _shared = server
    return _shared.url


def stop_shared() -> None:
    """Stop this process's server, if it runs, and remove its folder."""
    global _shared
    if _shared is not None:
        server, _shared = _shared, None
        server.stop()
        forget(server.folder)


atexit.register(stop_shared)


# --- a reader's server, and connections to either
