"""One server per process that asks (the trial server), and one initdb'd template per process
that the crash runs copy: started on first use, stopped and removed at exit.
"""

from __future__ import annotations

import atexit
import contextlib
from pathlib import Path

from labkit.bench.folders import new_run_dir, outlive_call, release_run_dir, remove_run_dir
from labkit.bench.postgres.local_server import LocalServer

_shared: LocalServer | None = None


def shared_url() -> str:
    """The URL of this process's own server, started (in a run folder of the runs home) on
    first use and reused by every run after. Stopped, and its folder removed, at exit."""
    global _shared
    if _shared is None or _shared.pid is None:
        stop_shared()
        server = LocalServer(new_run_dir(None, prefix="postgres-"))
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


_template: Path | None = None


def template_data() -> Path:
    """A data folder made by initdb once per process (1.4 s), copied by every server that asks
    (`copied=True`, 0.1 s): the crash runs start a server each. Removed at exit."""
    global _template
    if _template is None or not (_template / "data" / "PG_VERSION").exists():
        folder = new_run_dir(None, prefix="postgres-template-")
        outlive_call(folder)
        try:
            LocalServer(folder).initdb()
        except BaseException:
            forget(folder)
            raise
        _template = folder
    return _template / "data"


def forget_template() -> None:
    global _template
    if _template is not None:
        folder, _template = _template, None
        forget(folder)


def forget(folder: Path) -> None:
    with contextlib.suppress(OSError):
        remove_run_dir(folder)
    release_run_dir(folder)


atexit.register(stop_shared)
atexit.register(forget_template)


# --- a reader's server, and connections to either
