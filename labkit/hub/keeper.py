"""The hub's keeper: start.py starts JupyterHub through it, and nothing JupyterHub started
outlives it.

JupyterHub starts its proxy, its services and each participant's server in a session of its own
(a Ctrl-C in the hub's terminal reaches the hub alone). A hub that ends without stopping them
(it failed half-way through its start, or was killed) would leave them running, in no group of
the hub's, handed to PID 1. The keeper is a subreaper: an orphan among its descendants becomes
its child instead. Once the hub has ended, however it ended, the keeper kills and reaps each of
its children, then the orphans that leaves, until it has none.

Asked to stop (SIGTERM or SIGINT), it passes a SIGTERM to the hub, which stops what it started;
asked again, it SIGKILLs the hub. The end of the process that started it (`tasks.py hub`
killed) asks it once. (Where Linux's subreaper is missing, it ends the hub alone.)
"""

from __future__ import annotations

import signal
import subprocess
import sys

from labkit.bench.leftovers import become_subreaper, end_leftovers
from labkit.bench.portable import die_with

STOPS = {signal.SIGTERM, signal.SIGINT}


def keep(job: dict) -> None:
    """Run the hub's `command` until it ends, then end what it left; exit with its status. It
    stops the hub when its `caller` ends."""
    adopts = become_subreaper()
    asked: list[int] = []
    hub: subprocess.Popen

    def pass_on(number: int, frame: object) -> None:
        asked.append(number)
        hub.send_signal(signal.SIGTERM if len(asked) == 1 else signal.SIGKILL)

    # Held back until the hub is known: a stop asked meanwhile waits for it, rather than be
    # lost. Caught here, both are heard in the hub (an exec puts a caught signal back to its
    # default): started from a background shell, SIGINT was ignored, and so by every service
    # the hub starts, which then took 30 s to stop.
    signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    for number in STOPS:
        signal.signal(number, pass_on)
    die_with(job["caller"], signal.SIGTERM)
    hub = subprocess.Popen(job["command"], preexec_fn=heard_stops)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
    status = hub.wait()
    if adopts:  # every child the keeper has now is one the hub left: none is expected
        end_leftovers(hub.pid, expected=set())
    sys.exit(128 - status if status < 0 else status)


def heard_stops() -> None:
    """In the hub, before it runs: the stops the keeper held back are the hub's to hear."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
