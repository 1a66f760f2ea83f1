"""A warm start for the reader's code: the installed modules it imports, imported once in the
server, so that every worker forked after it has them already.

A recording worker says which modules it imported that the server lacks
(`installed.newly_imported`): LangGraph's prebuilt ToolNode, langchain's tools, whatever the
reader's graph brings. Those are installed modules (the standard library, site-packages),
found by name on the server's own path; the reader's own modules are never among them (their
import may write files, and their source may change before the next exploration). Before the
server imports them (`preload`), a throwaway fork imports them first: a module that starts a
thread as it loads, or fails to load, is never imported where workers are forked from (a fork
copies only the forking thread, and a lock another thread held would never be released).
Server-side: `replay.explore_in`.
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterable

from labkit.bench import launcher, spares
from labkit.bench.ctrl_c import ctrl_c_held
from labkit.bench.portable import die_with
from labkit.bench.restart import IMPORTED_BEFORE

__all__ = ["preload"]

TRIAL_SECONDS = 20.0  # the throwaway fork's imports: longer is a module that hangs as it loads
LOADS_CLEANLY = 0  # the throwaway fork's exit status when every import went well


def preload(modules: Iterable[str]) -> list[str]:
    """Import `modules` in this server, once a throwaway fork has loaded them without error and
    without a thread; then the waiting spares, forked before, are replaced. Returns the modules
    imported now (none when the fork refused them, or where no spare is forked: a kernel)."""
    wanted = [name for name in modules if name not in sys.modules]
    if not wanted or not launcher.FORKING_ALLOWED or not loads_cleanly(wanted):
        return []
    for name in wanted:
        importlib.import_module(name)
    IMPORTED_BEFORE.extend(wanted)  # a restart's moved clocks reach them too (`retake`)
    gc.freeze()  # as the server's start does: the workers leave the new pages shared
    spares.drop()
    spares.refill()
    return wanted


def loads_cleanly(modules: list[str]) -> bool:
    """Whether a fork of this process imports `modules` without an error, a thread, or a hang."""
    with ctrl_c_held(), spares.FORKS:  # as for a spare: nobody takes it for a worker's leftover
        server = os.getpid()
        pid = os.fork()
        if pid == 0:
            die_with(server)
            os._exit(import_alone(modules))
    deadline = time.monotonic() + TRIAL_SECONDS
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    if done[0] == 0:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return False
    return os.waitstatus_to_exitcode(done[1]) == LOADS_CLEANLY


def import_alone(modules: list[str]) -> int:
    """In the throwaway fork: import them all; LOADS_CLEANLY if no thread started."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)  # a module's complaint is the worker's to say
    try:
        for name in modules:
            importlib.import_module(name)
    except BaseException:  # noqa: BLE001 - any failure: the server does not import them
        return 1
    return LOADS_CLEANLY if threading.active_count() == 1 else 2
