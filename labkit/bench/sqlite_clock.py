"""SQLite's own clock, made to read Python's: a restart moves it too (`restart.move_clocks`).

SQLite reads the time itself, not through Python: date('now'), time(), datetime(), julianday(),
unixepoch(), strftime(format) and the keywords CURRENT_TIMESTAMP, CURRENT_DATE and CURRENT_TIME
(in a column's DEFAULT too). In a process whose Python clocks a restart moved, they would
still read the real day, and a key made of them would pass a retry that comes a day later.

After `follow_python_clock()`, every connection the process opens has functions of its own
under those names (a connection's functions come before SQLite's built-in ones). Each runs
SQLite's real function on a private in-memory connection, with the time value 'now' (in any
case, or left out, which means now) replaced by `time.time()` as SQLite keeps 'now': a UTC
time string to the millisecond. Every other time value, and every modifier ('localtime',
'+1 day', 'start of month'), keeps SQLite's meaning. SQLite 3.40 (this lab's) reads 'now' as
such a string; later versions take 'now' for UTC, so there a 'utc' modifier right after 'now'
does nothing, where here it shifts the time as 3.40 does. Connections opened before the call,
and those made from SQLite's own class directly (`sqlite3.Connection.__mro__[-2]`), keep the
real clock. Worker-side: standard library only.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable

__all__ = ["follow_python_clock"]

# Where each function takes its time value (strftime after its format); left out, it is now.
TIME_VALUE_AT = {"date": 0, "time": 0, "datetime": 0, "julianday": 0, "unixepoch": 0, "strftime": 1}
# The keywords, which SQLite runs as functions of no argument: the function each equals at now.
KEYWORDS = {"current_timestamp": "datetime", "current_date": "date", "current_time": "time"}

_private: list[sqlite3.Connection] = []  # where SQLite's real functions run, opened when first used
_private_lock = threading.Lock()  # one statement at a time on it, whichever thread asks


def follow_python_clock() -> None:
    """From now on every SQLite connection this process opens reads 'now' from `time.time()`:
    through `sqlite3.connect`, whatever its factory, or `sqlite3.Connection` and the subclasses
    of it made from now on (a commit watch's too, whichever of the two came first)."""
    import _sqlite3

    real_connect = sqlite3.connect

    class Connection(sqlite3.Connection):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            give_python_clock(self)

    def connect(*args: object, **kwargs: object) -> sqlite3.Connection:
        db = real_connect(*args, **kwargs)
        if not isinstance(db, Connection):  # a factory that does not subclass ours
            give_python_clock(db)
        return db

    for module in (sqlite3, sqlite3.dbapi2, _sqlite3):
        module.connect, module.Connection = connect, Connection


def give_python_clock(db: sqlite3.Connection) -> None:
    """Give one connection the functions that read 'now' from Python's clock. Deterministic, as
    SQLite's own are within a statement: a schema with an index or a generated column over
    date(x) still opens (SQLite refuses a non-deterministic function there)."""
    for name, (arguments, function) in FUNCTIONS.items():
        db.create_function(name, arguments, function, deterministic=True)


def now_at(name: str, at: int) -> Callable[..., object]:
    """SQLite's function `name`, its time value (argument `at`) 'now' read from Python."""

    def function(*args: object) -> object:
        if len(args) == at or (len(args) > at and is_now(args[at])):
            args = (*args[:at], python_now(), *args[at + 1 :])
        return sqlites_own(name, args)

    return function


def is_now(value: object) -> bool:
    """Whether SQLite reads `value` as the time value 'now' (it ignores the case)."""
    return isinstance(value, str) and value.lower() == "now"


def python_now() -> str:
    """`time.time()` as SQLite keeps 'now': UTC, to the millisecond."""
    milliseconds = int(time.time() * 1000)
    day_and_time = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(milliseconds // 1000))
    return f"{day_and_time}.{milliseconds % 1000:03d}"


def sqlites_own(name: str, args: tuple) -> object:
    """SQLite's own `name(*args)`, run on a private connection that was given no clock."""
    with _private_lock:
        if not _private:
            own_class = sqlite3.Connection.__mro__[-2]  # whatever subclasses stand in for it
            _private.append(own_class(":memory:", check_same_thread=False))
        marks = ", ".join("?" * len(args))
        return _private[0].execute(f"SELECT {name}({marks})", args).fetchone()[0]


# Each name: its number of arguments (-1: any) and the function that stands in for SQLite's.
FUNCTIONS = {name: (-1, now_at(name, at)) for name, at in TIME_VALUE_AT.items()}
FUNCTIONS.update({keyword: (0, now_at(name, 0)) for keyword, name in KEYWORDS.items()})
