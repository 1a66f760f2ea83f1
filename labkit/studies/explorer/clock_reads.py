"""Whether the reader's code read a clock that a restart moves: if it did not, a crash
state's recoveries at its other restarts (a day, a month, a year later) would do what the one
at once did, and need not run.

A restart moves the clocks of this process only (`bench.restart.move_clocks`): time's wall,
monotonic and performance clocks and their texts, datetime's now, utcnow and today, and
SQLite's 'now', which reads time's clock. Each of them, once moved, is wrapped here: a call
is the reader's when the innermost frame that called it, past the standard library's and
`bench.sqlite_clock`'s (SQLite's 'now' is read for the code that ran the statement), is
neither the lab's (labkit's bench and explorer: its ledger's times are no state,
`states.VOLATILE`) nor LangGraph's own (its checkpoints' times and ids are no state either).
A library the reader's code calls, or one that runs a tool of theirs, is theirs.
Worker-side: standard library only.
"""

from __future__ import annotations

import datetime
import os
import sys
import time

from labkit.bench.restart import MOVED, retake

__all__ = ["read", "watch_clock_reads", "when_read"]

EXPLORER = os.path.dirname(os.path.abspath(__file__)) + os.sep
BENCH = os.path.join(os.path.dirname(os.path.dirname(EXPLORER.rstrip(os.sep))), "bench") + os.sep
EXAMPLES = EXPLORER + "lab.py"  # the lab's own targets: the reader's code
SQLITE_CLOCK = BENCH + "sqlite_clock.py"  # SQLite's 'now', read for the statement's caller
_read = [False]
_then: list = []  # what to call at the first read


def read() -> bool:
    """Whether the reader's code read a moved clock since `watch_clock_reads`."""
    return _read[0]


def when_read(then: object) -> None:
    """Call `then()` once, at the reader's first read of a moved clock."""
    _then[:] = [then]


def noted() -> None:
    _read[0] = True
    while _then:
        _then.pop()()


def watch_clock_reads() -> None:
    """Wrap every moved clock (call after `move_clocks`)."""
    import sysconfig  # only where a recovery has other restarts waiting

    stdlib = tuple({sysconfig.get_paths()[k] + os.sep for k in ("stdlib", "platstdlib")})
    sites = tuple({sysconfig.get_paths()[k] + os.sep for k in ("purelib", "platlib")})
    langgraph = tuple(os.path.join(site, "langgraph") + os.sep for site in sites)

    def readers(frame: object) -> bool:
        while frame is not None:
            name = frame.f_code.co_filename
            if name.startswith("<") and not name.startswith("<your"):
                frame = frame.f_back
                continue
            standard = name.startswith(stdlib) and not name.startswith(sites)
            if standard or name == SQLITE_CLOCK:
                frame = frame.f_back
                continue
            lab = name.startswith((EXPLORER, BENCH)) and not name.startswith(EXAMPLES)
            return not lab and not name.startswith(langgraph)
        return False

    def look(frame: object) -> None:
        """Note the read if it is the reader's (the first one only: then nothing is looked at)."""
        if not _read[0] and readers(frame):
            noted()

    def wrapped(real):
        def clock(*args, **kwargs):
            look(sys._getframe(1))
            return real(*args, **kwargs)

        return clock

    moved_clocks = {name: getattr(time, name) for name in MOVED}
    for name, moved_clock in moved_clocks.items():
        setattr(time, name, wrapped(moved_clock))
    moved, moved_date = datetime.datetime, datetime.date

    class Watched(moved):
        @classmethod
        def now(cls, tz=None):
            look(sys._getframe(1))
            return super().now(tz)

        @classmethod
        def utcnow(cls):
            look(sys._getframe(1))
            return super().utcnow()

        @classmethod
        def today(cls):
            look(sys._getframe(1))
            return super().today()

    class WatchedDate(moved_date):
        @classmethod
        def today(cls):
            look(sys._getframe(1))
            return super().today()

    datetime.datetime, datetime.date = Watched, WatchedDate
    retake({moved_clock: getattr(time, name) for name, moved_clock in moved_clocks.items()})
    retake({moved: Watched, moved_date: WatchedDate})  # in the reader's libraries loaded before
