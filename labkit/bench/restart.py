"""The restarted world: a process that runs again as it would after a real restart, later.

A judged answer (an operation key, a reader's step) must give the same result on a retry as
on the first attempt, and a real retry comes in another process, under another supervisor,
maybe hours or months later. A retry the lab starts moments later under the same parent would
let a key made of the parent's pid, the date, the month or the hour pass. So the worker that
retries calls `restart_here(RETRY_DELAY)` first: it forks and goes on as the child, with a
new pid and parent pid, its clocks (Python's, and SQLite's 'now') moved to another year,
month, day, hour and minute, and `LABKIT_ATTEMPT` one higher; the parent only waits and ends
as the child ends, so the launcher sees one worker. A real retry may also come on another
machine, so a judged one then calls `move_host()`: another host name, address and node id.
Worker-side: standard library only.

A recovery can come at other moments too (`RESTARTS`, lesson 9's explorer): at once, a day
later, in the next month, in the next year; and after a restart in a new interpreter, whose
hash seed is new (a fork keeps its parent's: the launcher starts that one fresh).
`seconds_until(restart)` says how far each moves the clocks.
"""

from __future__ import annotations

import datetime
import os
import signal
import sys
import time
from types import ModuleType

from labkit.bench.output import flush_output

__all__ = [
    "ATTEMPT",
    "FRESH",
    "IMPORTED_BEFORE",
    "LATER",
    "MOVED",
    "RESTARTS",
    "RETRY_DELAY",
    "RETRY_ADDRESS",
    "RETRY_NODE",
    "move_clocks",
    "move_host",
    "new_parent",
    "next_attempt",
    "restart_here",
    "retake",
    "seconds_until",
]

# A retry comes a day, an hour, a minute and a second after the attempt before it: every field of
# the time of day moves. The month's and the year's restarts come at 01:00:00, so a key of the
# minute (or the second) alone, made in the first minute of an hour, changed on no restart when
# this one kept the minute.
LATER = 86_400 + 3_600 + 61
# A judged retry (lessons 2 and 3) comes 410 days, 2 hours and a minute later: in every time
# zone, local and UTC alike, another year, month, day of the month, hour, minute and weekday.
# 410 days is more than a year and a month (at most 397 days) and less than a year and two
# (at least 424), so no date comes back to its own day; 2 hours keep the hour moving across a
# change to or from summer time; 410 = 58 weeks and 4 days.
RETRY_DELAY = 410 * 86_400 + 2 * 3_600 + 60
ATTEMPT = "LABKIT_ATTEMPT"  # the environment variable that says which attempt this process is
RESTARTS = ("now", "day", "month", "year", "hash")  # when, and how, a recovery comes back
FRESH = "hash"  # the restart that needs a new interpreter: a fork keeps the hash seed
CPU_CLOCKS = {time.CLOCK_PROCESS_CPUTIME_ID, time.CLOCK_THREAD_CPUTIME_ID}  # not wall clocks
MOVED = ("time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns")
MOVED += ("localtime", "gmtime", "ctime", "asctime", "strftime", "clock_gettime")
MOVED += ("clock_gettime_ns",)  # time's clocks that a restart moves
# A judged retry's node id (`move_host`): b"\x01retry". Its first octet's lowest bit, the
# multicast bit, is set, as RFC 4122 (4.5) asks of a node id that is no network card's address:
# a card's has it clear, and without a card uuid.getnode() is random in every process anyway.
RETRY_NODE = 0x01_72_65_74_72_79
# A judged retry's address, what its host name resolves to (`move_host`): an address of
# TEST-NET-1 (RFC 5737), kept for documentation, so no real host has it.
RETRY_ADDRESS = "192.0.2.1"
# The installed modules of the reader's that were imported before a restart (the explorer's
# server imports them once and forks the recoveries from it: `bench.preload`). A real restart
# imports them anew, after its clocks moved: a clock one took by a name of its own as it
# loaded (arrow's `from datetime import datetime as dt_datetime`) is given the moved one.
IMPORTED_BEFORE: list[str] = []


def move_clocks(seconds: float) -> None:
    """Every clock a key could be read from runs `seconds` ahead in this process: time's wall,
    monotonic and performance clocks, the local and UTC calendars and their texts, datetime's
    now, utcnow and today, and SQLite's 'now' in every connection opened from here on, which
    reads time's clock (`sqlite_clock`; the kernel's file times do not move); in the reader's
    modules imported before (`IMPORTED_BEFORE`), those they took by a name of their own."""
    from labkit.bench.sqlite_clock import follow_python_clock  # (sqlite3: a restart pays it)

    before = {name: getattr(time, name) for name in MOVED}  # for `retake`
    before.update(datetime=datetime.datetime, date=datetime.date)
    nanoseconds = int(seconds * 1e9)
    for name in ("time", "monotonic", "perf_counter"):
        real, real_ns = getattr(time, name), getattr(time, f"{name}_ns")
        setattr(time, name, lambda real=real: real() + seconds)
        setattr(time, f"{name}_ns", lambda real_ns=real_ns: real_ns() + nanoseconds)
    for name in ("localtime", "gmtime", "ctime"):
        real = getattr(time, name)
        setattr(
            time, name, lambda secs=None, real=real: real(time.time() if secs is None else secs)
        )
    real_asctime, real_strftime = time.asctime, time.strftime
    time.asctime = lambda t=None: real_asctime(time.localtime() if t is None else t)
    time.strftime = lambda f, t=None: real_strftime(f, time.localtime() if t is None else t)
    real_clock, real_clock_ns = time.clock_gettime, time.clock_gettime_ns
    time.clock_gettime = lambda clock: real_clock(clock) + (0 if clock in CPU_CLOCKS else seconds)
    time.clock_gettime_ns = lambda clock: (
        real_clock_ns(clock) + (0 if clock in CPU_CLOCKS else nanoseconds)
    )
    delta = datetime.timedelta(seconds=seconds)

    class Later(datetime.datetime):
        @classmethod
        def now(cls, tz=None):  # noqa: ANN001, ANN206 - the signature of datetime.now
            return super().now(tz) + delta

        @classmethod
        def utcnow(cls):  # noqa: ANN206
            return super().utcnow() + delta

        @classmethod
        def today(cls):  # noqa: ANN206
            return cls.now()

    class LaterDate(datetime.date):
        @classmethod
        def today(cls):  # noqa: ANN206
            return Later.now().date()

    datetime.datetime, datetime.date = Later, LaterDate
    retake({before[name]: getattr(time, name) for name in MOVED})
    retake({before["datetime"]: Later, before["date"]: LaterDate})
    follow_python_clock()


def retake(replaced: dict) -> None:
    """Each clock of `replaced` (the real one: its replacement) that a module imported before
    the restart (`IMPORTED_BEFORE`) holds by a name of its own is replaced there too, as
    importing the module now would bind it."""
    taken = {id(real): (real, new) for real, new in replaced.items()}
    for name in IMPORTED_BEFORE:
        namespace = getattr(sys.modules.get(name), "__dict__", {})
        for key, value in list(namespace.items()):
            real, new = taken.get(id(value), (None, None))
            if real is value:
                namespace[key] = new


def move_host() -> None:
    """Run on as on another machine: a real retry may come on one (a rescheduled pod gets a
    new name and address), where a key made of the host would change. Its name gets "-retry"
    added, the name resolves to `RETRY_ADDRESS`, and its node id is `RETRY_NODE`. Only a judged
    retry (lessons 2 and 3) moves: the explorer's restarts keep the host, so that a reader's
    graph that logs it is no finding."""
    import platform
    import socket
    import uuid  # (on Linux it imports platform, which keeps the os.uname() it read)

    name = f"{socket.gethostname()}-retry"
    real = os.uname()
    os.uname = lambda: os.uname_result((real.sysname, name, *real[2:]))
    socket.gethostname = lambda: name  # socket.getfqdn() asks it too
    resolve_moved_name(socket, name)
    platform._uname_cache = None  # platform.uname() and platform.node() read os.uname() anew
    if "HOSTNAME" in os.environ:
        os.environ["HOSTNAME"] = name
    uuid._node = RETRY_NODE  # what uuid.getnode() returns once it has looked
    uuid._generate_time_safe = None  # uuid1() makes its ids itself, from getnode(), not libuuid


def resolve_moved_name(socket: ModuleType, name: str) -> None:
    """Resolve the moved host's `name` to `RETRY_ADDRESS` (no resolver knows it), as its own
    machine would, in the three calls a key of the host's address is made with; every other
    name resolves as before."""
    by_name, by_name_ex, address_info = (
        socket.gethostbyname,
        socket.gethostbyname_ex,
        socket.getaddrinfo,
    )
    socket.gethostbyname = lambda host: RETRY_ADDRESS if host == name else by_name(host)
    socket.gethostbyname_ex = lambda host: (
        (name, [], [RETRY_ADDRESS]) if host == name else by_name_ex(host)
    )
    socket.getaddrinfo = lambda host, *args, **kwargs: address_info(
        RETRY_ADDRESS if host == name else host, *args, **kwargs
    )


def seconds_until(restart: str, now: float | None = None) -> float:
    """How far a restart moves the clocks from `now` (time.time()'s): none at once; a day, an
    hour, a minute and a second (also the new interpreter's); or into the next month or the
    next year, so that a key of the month or of the year changes as it would, read in local time
    or in UTC.

    The month's: an hour into its 2nd day, local time, which in every time zone (UTC-12 to
    UTC+14) is in that month in UTC too (an hour into the 1st, in Shanghai, is still the
    last day of the month before in UTC). The year's: an hour into January 5th, in the next
    ISO year too (`%G`, `isocalendar()`: January 4th is always in its first week). Both come
    after the later of now's local and UTC days (near a month's end one is in the next) and
    its ISO year (December 29th can be in the next one already)."""
    now = time.time() if now is None else now
    if restart not in ("month", "year"):
        return 0.0 if restart == "now" else LATER
    local = datetime.date.fromtimestamp(now)
    utc = datetime.datetime.fromtimestamp(now, datetime.UTC).date()
    if restart == "month":
        then = (max(local, utc).replace(day=1) + datetime.timedelta(days=32)).replace(day=2)
    else:
        year = max(local.year, utc.year, local.isocalendar().year, utc.isocalendar().year)
        then = datetime.date(year + 1, 1, 5)
    return time.mktime((then.year, then.month, then.day, 1, 0, 0, 0, 0, -1)) - now


def restart_here(seconds_later: float) -> None:
    """Go on in a child process, as after a restart `seconds_later` seconds from now: a new pid
    and parent pid, moved clocks, the next attempt's number in the environment. The parent
    never returns from here: it waits for the child and ends with the child's status."""
    new_parent()
    next_attempt(seconds_later)


def new_parent() -> None:
    """Go on in a child process, under a parent of its own (this process, which never returns
    from here: it waits for the child and ends with the child's status)."""
    from labkit.bench.portable import die_with  # ctypes, for prctl: only a retry needs it

    flush_output()  # nothing buffered may be written twice, once by each process
    parent = os.getpid()
    child = os.fork()
    if child:
        end_as(child)
    die_with(parent)  # a SIGKILL of the worker the launcher started ends this one too


def next_attempt(seconds_later: float) -> None:
    """Run on as the next attempt, `seconds_later` from now: moved clocks, the attempt's number
    one higher. Alone, for a process whose pid and parent differ from the attempt's already
    (the crash explorer's recovery, when its recording ran under a parent of its own)."""
    os.environ[ATTEMPT] = str(int(os.environ.get(ATTEMPT, "1")) + 1)
    move_clocks(seconds_later)


def end_as(child: int) -> None:
    """Wait for the child and end as it ended (never return): with its exit code, or by the
    signal that killed it (a SIGKILL of the child reads as -9 to whoever started this process)."""
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number != signal.SIGKILL:  # (its handler cannot be set, nor needs to be)
            signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
        os._exit(128 + number)  # a signal whose default is not to end a process: as a shell says
    os._exit(os.WEXITSTATUS(status))
