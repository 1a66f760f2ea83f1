"""The checker: after a crash and a recovery, is what the files hold right?

A checker is a function of one `CrashState`; it returns None when the state is right, or one
line that says what is wrong ("duplicate: ...", "lost: ..."). It runs in the recovery worker,
so a reader's checker is the reader's code in the reader's lab, like the code it checks; a
reader's line is shown as they wrote it.

The default checker's line is a `Finding`: one of `FINDINGS`, a code with fields
("holds_more": a file, a table, a count and the clean run's) written out in the worker's words,
that keeps its code and fields; the worker reports them beside the line, so the views say it
in the reader's language (explorer.toml's [finding]) from the code, never from its English.

The default checker takes the run without a crash as the truth: every effect that run made (each
table's rows, each line of a file it wrote; the lab's own files aside: the explorer's checkpointer
keeps LangGraph's state in `.labkit-checkpoints.db`, so that a checkpoints.db of the reader's is
judged as any other file) must be there exactly as often after any crash and recovery, and the
recovered run must have finished. A file that run wrote and then renamed away or removed (a
temporary: the atomic save's `NamedTemporaryFile`, a lock) is no effect of its own, and a crash may
leave it behind. A table's rows must also hold what they held (an UPDATE run twice leaves as many
rows, with other values), but for values that differ between two equal runs anyway (`IGNORED`, shown
as null): timestamps (ISO dates and times; a number of seconds, milliseconds, microseconds or
nanoseconds since 1970 that is within five years of the check: a clock's reading, where a quota of 2
GiB, 2147483648 bytes, is no time but a value to compare) and generated ids (UUIDs; a table's
INTEGER PRIMARY KEY, which SQLite numbers: INSERT OR REPLACE run twice gives the same row another
one). Other files: counted line by line, and their lines compared the same way (a JSON line's values
as a row's; in a text line, a date, a time of day or a UUID is blanked): a counter or a JSON
document rewritten whole keeps one line with other contents. Where the run without a crash is itself
wrong (study 001's fresh key makes two tickets with no crash at all), only a checker that knows the
operation can say so: pass your own. Worker-side: standard library only.

A `shelve` on dbm.dumb (three files: miles.dat, and its index miles.dir with the index's backup
miles.bak) is one entry, miles.dat's, read as dbm.dumb reads it (`states.read_shelf`): a line a key,
{"ada": 500}, judged as a file's lines; never by its index's lines, whose byte offsets differ
between two shelves that hold the same. A file that is neither SQLite nor text (a gdbm file, a
pickle, a dbm.dumb shelf whose values are no plain data: `states.UNREADABLE`) has no rows or lines
to count; the state holds a digest of its bytes (a shelf's, of its keys and values). Where it is the
clean run's, the file holds what that run left, and the row may be consistent; where it differs (or
the file is there in one state only), no checker read what it holds, so the row is "not_judged",
never consistent. A verdict the readable files give still comes first (a duplicate row in a table is
a duplicate, whatever a binary file beside it holds), and so does an unfinished run: "not
judged" is said only where nothing else is wrong. A checker of your own reads what it likes (it
may open the shelve): its None is its verdict.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from collections import Counter

from labkit.bench.sql_names import quoted

__all__ = [
    "IGNORED",
    "FINDINGS",
    "OUTCOMES",
    "CrashState",
    "Finding",
    "default_checker",
    "outcome_of",
]

OUTCOMES = ("consistent", "duplicate", "lost", "inconsistent", "not_judged")
CLEAN_LEFT = "where the run without a crash left"
FINDINGS = {  # the default checker's findings by code: its line, which names the outcome first
    "recovery_failed": "lost: recovery failed: {error}",
    "holds_more": "duplicate: {what} holds {count} " + CLEAN_LEFT + " {clean}",
    "holds_fewer": "lost: {what} holds {count} " + CLEAN_LEFT + " {clean}",
    "holds_other": "inconsistent: {what} holds {row} " + CLEAN_LEFT + " {clean_row}",
    "unfinished": "lost: recovery did not finish the run",
    "not_read": "not judged: {file} cannot be read (neither SQLite nor text), and its bytes"
    " differ from those the run without a crash left",
}
IN_A_TABLE = " table "  # "effect.db table receipts": {what} of a SQLite file's table
IGNORED = {  # values two equal runs give differently: never compared, whatever the column
    "timestamp": re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}|\Z)"),
    "uuid": re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z", re.I),
}
# A number is a time if, read as seconds, ms, µs or ns since 1970, it is this close to now: a
# clock read during the run (a restart moves it a year at most) or a deadline set from one.
NEAR_NOW = 5 * 365 * 86_400  # seconds
CLOCK_UNITS = (1, 10**3, 10**6, 10**9)
IN_TEXT = re.compile(  # IGNORED's values inside a text line: a date (and time), a time, a UUID
    r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2})?([.,]\d+)?(Z|[+-]\d{2}:?\d{2})?)?"
    r"|\b\d{2}:\d{2}:\d{2}([.,]\d+)?"
    r"|[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}",
    re.I,
)


class Finding(str):
    """The default checker's answer: its line, a str as every checker's answer is, that also
    keeps its code and fields (`as_dict`): {"code": "holds_more", "file": "effect.db",
    "table": "receipts", "count": 2, "clean": 1}."""

    code: str
    fields: dict

    def __new__(cls, code: str, **fields: object) -> Finding:
        file, table = fields.get("file"), fields.get("table")
        what = f"{file}{IN_A_TABLE}{table}" if table else file
        said = super().__new__(cls, FINDINGS[code].format(what=what, **fields))
        said.code, said.fields = code, fields
        return said

    def as_dict(self) -> dict:
        return {"code": self.code, **self.fields}


class CrashState:
    """One crash point's story: the files as the kill left them and after recovery, the run
    without a crash at its end, and whether recovery finished the run. (A plain class, not a
    dataclass: a worker starts faster without `dataclasses`.)"""

    def __init__(
        self,
        point: dict | None,  # n, op, detail, where; None for the run without a crash
        at_kill: dict,  # file -> {table: rows} for SQLite files, file -> [lines] for text,
        # a dbm.dumb shelf's .dat -> [{key: value}], file -> "not SQLite, not text, sha256:…"
        # for others (`states.UNREADABLE`)
        after: dict,
        clean: dict,  # the run without a crash, at its end
        finished: bool,  # recovery ran the work to its end (done=1; the graph reached END)
        recovery_error: str | None = None,  # the recovery's exception, in one line
        run_dir: str = "",
        temporaries: tuple[str, ...] = (),  # files the run without a crash wrote, then renamed
        # or removed: what a crash left of one is no effect
    ) -> None:
        self.point, self.at_kill, self.after, self.clean = point, at_kill, after, clean
        self.finished, self.recovery_error, self.run_dir = finished, recovery_error, run_dir
        self.temporaries = temporaries

    def __repr__(self) -> str:
        where = "no crash" if self.point is None else f"crash point {self.point['n']}"
        return f"CrashState({where}, finished={self.finished}, run_dir={self.run_dir!r})"

    def rows(self, table: str, which: str = "after") -> list[list]:
        """The rows of `table` in whichever SQLite file holds it ([] if none does)."""
        for content in getattr(self, which).values():
            if isinstance(content, dict) and table in content:
                return content[table]
        return []

    def lines(self, file: str, which: str = "after") -> list:
        """The lines of a file of the run (JSON lines as dicts, without pid and time)."""
        content = getattr(self, which).get(file, [])
        return content if isinstance(content, list) else []


def effects(state: dict) -> dict[str, int]:
    """How many rows each table holds and how many lines each other file: the effects."""
    counted = {}
    for file, content in state.items():
        if isinstance(content, dict):
            counted.update({f"{file}:{table}": len(rows) for table, rows in content.items()})
        else:
            counted[file] = len(content)
    return counted


def ignored(value: object) -> bool:
    """A timestamp or a generated id: a value two runs without a crash give differently."""
    if isinstance(value, str):
        return any(pattern.match(value) for pattern in IGNORED.values())
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return is_a_time(value)
    return False


def is_a_time(number: float) -> bool:
    """Whether `number` reads as a clock's time near now (NEAR_NOW), in any of CLOCK_UNITS."""
    now = time.time()
    return any(abs(number / unit - now) < NEAR_NOW for unit in CLOCK_UNITS)


def generated_ids(run_dir: str, state: dict) -> dict[str, int]:
    """Each table's INTEGER PRIMARY KEY column ("file:table" -> its index), where it has one:
    SQLite numbers its rows, so a re-run that leaves the same row (INSERT OR REPLACE) may
    give it another number. Read from the schema of the files in `run_dir`."""
    found = {}
    for file, content in state.items():
        path = os.path.join(run_dir, file)
        if not isinstance(content, dict) or not os.path.isfile(path):
            continue
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            for table in content:
                columns = db.execute(f"PRAGMA table_info({quoted(table)})").fetchall()
                keys = [c for c in columns if c[5]]  # (cid, name, type, notnull, default, pk)
                if len(keys) == 1 and keys[0][2].upper() == "INTEGER":
                    found[f"{file}:{table}"] = keys[0][0]
        except sqlite3.Error:  # a schema it cannot read: every column is compared
            continue
        finally:
            db.close()
    return found


def contents(state: dict, ids: dict[str, int]) -> dict[str, list[str]]:
    """Each table's rows, IGNORED values and generated `ids` blanked, in an order of their own
    (not rowid's)."""
    return {
        name: sorted(
            json.dumps(
                [None if ignored(v) or i == ids.get(name) else v for i, v in enumerate(row)],
                default=repr,
            )
            for row in rows
        )
        for file, content in state.items()
        if isinstance(content, dict)
        for table, rows in content.items()
        for name in [f"{file}:{table}"]
    }


def blanked(value: object) -> object:
    """A file's line as compared: IGNORED values (in a JSON line, at any depth) as None, and
    in a text line each date, time or UUID as "_"."""
    if isinstance(value, dict):
        return {k: blanked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [blanked(v) for v in value]
    if ignored(value):
        return None
    return IN_TEXT.sub("_", value) if isinstance(value, str) else value


def lines_of(state: dict) -> dict[str, list[str]]:
    """Each file's lines (not a SQLite file's), blanked, in an order of their own: a text
    line that starts with a date is a log line, not a timestamp, so only its dates go."""
    return {
        file: sorted(
            json.dumps(IN_TEXT.sub("_", line) if isinstance(line, str) else blanked(line))
            for line in content
        )
        for file, content in state.items()
        if isinstance(content, list)
    }


def default_checker(state: CrashState) -> Finding | None:
    """Every effect of the run without a crash exactly as often, with the same contents, and
    the run finished; a file no checker can read, byte for byte, else the row is not judged."""
    if state.recovery_error:
        return Finding("recovery_failed", error=state.recovery_error)
    everything = without_temporaries(state)
    unread = unread_files(everything, state.clean)
    after, clean = readable_part(everything, unread), readable_part(state.clean, unread)
    made, expected = effects(after), effects(clean)
    for name in sorted(set(made) | set(expected)):
        have, want = made.get(name, 0), expected.get(name, 0)
        if have != want:
            code = "holds_more" if have > want else "holds_fewer"
            return Finding(code, **file_and_table(name), count=have, clean=want)
    ids = generated_ids(state.run_dir, after)
    made, expected = contents(after, ids), contents(clean, ids)
    for name in sorted(expected):
        have, want = Counter(made.get(name, [])), Counter(expected[name])
        if have != want:
            row, instead = min(have - want), min(want - have)
            return Finding("holds_other", **file_and_table(name), row=row, clean_row=instead)
    made, expected = lines_of(after), lines_of(clean)
    for name in sorted(expected):
        have, want = Counter(made.get(name, [])), Counter(expected[name])
        if have != want:
            line, instead = min(have - want), min(want - have)
            return Finding("holds_other", file=name, table=None, row=line, clean_row=instead)
    if not state.finished:
        return Finding("unfinished")
    changed = [name for name in unread if everything.get(name) != state.clean.get(name)]
    if changed:
        return Finding("not_read", file=changed[0])
    return None


def unread_files(after: dict, clean: dict) -> list[str]:
    """The files either state holds as neither SQLite nor text (a digest, a str): counted in
    neither, whatever the other state holds of them (a text file cut mid-character)."""
    held = [*after.items(), *clean.items()]
    return sorted({name for name, content in held if isinstance(content, str)})


def readable_part(state: dict, unread: list[str]) -> dict:
    """A state without the files no checker reads (`unread_files`)."""
    return {name: content for name, content in state.items() if name not in unread}


def without_temporaries(state: CrashState) -> dict:
    """What recovery left but the temporaries a crash left behind: a file the run without a
    crash wrote and then renamed over another or removed (the atomic save's
    `NamedTemporaryFile`, a lock) holds no effect of its own; what it held for another file,
    that file holds, and is compared."""
    return {file: held for file, held in state.after.items() if file not in state.temporaries}


def file_and_table(name: str) -> dict:
    """An effect's name ("effect.db:receipts", "outbox.log") as a finding's fields."""
    file, _, table = name.partition(":")
    return {"file": file, "table": table or None}


def outcome_of(complaint: str | None) -> str:
    """The matrix's code for a checker's answer: consistent when it has nothing to say, else
    the outcome its line names first ("not judged: ..." is "not_judged")."""
    if complaint is None:
        return "consistent"
    first = complaint.split(":")[0].strip().replace(" ", "_")
    return first if first in OUTCOMES else "inconsistent"
