"""What a run folder holds, as the explorer compares crash states: every table of every
SQLite file (known by its header, whatever its name) and every line of every other file the
run wrote, in the folder or in a folder of it ("logs/sent.log"), JSON lines without the fields
two equal runs give differently; a file that is neither is named (`unreadable`) and held by its
bytes' digest: no checker reads it, but two states still tell its contents apart.

A `shelve` on dbm.dumb (shelve.open's where Python has neither gdbm nor ndbm) is three files:
miles.dat holds the pickled values, miles.dir the index (a line a key: "'ada', (512, 15)", where
in .dat its value is) and miles.bak the index before its last rewrite. Read one by one, two equal
shelves differ in offsets; so the three are one entry, under the .dat's name, read as dbm.dumb
reads them (`read_shelf`): a line a key, {"ada": 500}, where every value is plain data.
Worker-side: standard library only.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable

from labkit.bench.commit_watch import HEADER, read_file
from labkit.bench.own_names import LABS_OWN, labs_own_name
from labkit.bench.restart import RESTARTS
from labkit.bench.sql_names import quoted
from labkit.bench.trace import TRACE_FILE
from labkit.studies.explorer.restart_forks import AFTER

__all__ = [
    "CHECKPOINT_FILE",
    "ignored_file",
    "is_database",
    "kept_in",
    "lab_file",
    "labs_own_file",
    "plain",
    "read_lines",
    "read_shelf",
    "read_state",
    "read_tables",
    "run_folder",
    "state_digest",
    "unreadable",
    "without_volatile",
]

VOLATILE = ("pid", "t_ns")  # fields of a JSON line that differ between two equal runs
SKIPPED = ("-journal", "-wal", "-shm")  # SQLite's companions of a file: not the run's state
REAL_CONNECT = sqlite3.connect  # bound before any commit watch wraps it
# a worker's file of the lab's -> the one the lab always makes beside it
WORKER_PAIR = {"stdout": "stderr", "stderr": "stdout", "json": "stderr"}
# the explorer's workers: their output and report are the lab's before the worker has run too,
# so a reader's recovery.json is refused in the recording, never overwritten by a recovery's
EXPLORERS_ROLES = ("record", "first", "recovery")
# the explorer's checkpointer (`savers`): LangGraph's state in a file of the lab's own, never
# judged, but part of a crash state; a checkpoints.db of the reader's is judged as any file
CHECKPOINT_FILE = LABS_OWN + "checkpoints.db"
UNREADABLE = "not SQLite, not text"  # a file whose contents the explorer cannot judge: said
# with its bytes' digest ("not SQLite, not text, sha256:…"), a str where others are lists, dicts
COPIES = {AFTER + restart for restart in RESTARTS}  # a point's crash state, copied for a restart
DBM_INDEX = (".dir", ".bak")  # beside a dbm.dumb .dat: its index, and the index before its rewrite


def labs_own_file(run_dir: str, name: str) -> bool:
    """Whether `name`, a file's path in the run folder `run_dir`, is the lab's own: its trace
    or a `lab_file`, in the run folder itself. In a folder of it every file is the reader's
    (their logs/trace.jsonl, their logs/app.stdout)."""
    return os.sep not in name and (name == TRACE_FILE or lab_file(name, run_dir))


def lab_file(name: str, folder: str | None = None) -> bool:
    """A file of the lab's own in a run folder (`folder`): one the lab named as its own (a
    folder's marker, the explorer's CHECKPOINT_FILE), or a worker's output and report, which
    come as a pair (`<role>.stdout` with `<role>.stderr`, and `<role>.json` beside them; an
    explorer's worker's, whatever is beside them). A reader's orders.json, app.stdout or .sent,
    with no worker's output beside it, is the run's own."""
    if labs_own_name(name):
        return True
    stem, dot, kind = name.rpartition(".")
    beside = WORKER_PAIR.get(kind) if dot else None
    if beside is None:
        return False
    pair = os.path.join(folder or ".", f"{stem}.{beside}")
    return stem in EXPLORERS_ROLES or os.path.exists(pair)


def ignored_file(name: str, patterns: Iterable[str]) -> bool:
    """Whether the file at `name` (its path in the run folder) matches one of `patterns`
    (`fnmatch`'s, whose `*` crosses folders: "*.log" is agent.log and logs/app.log too)."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def read_state(run_dir: str) -> dict:
    """What the run folder holds: every table of every SQLite file (rows in rowid order) and
    every line of every other file the run wrote, JSON lines without their pid and time; a
    file in a folder of it by its path there ("logs/sent.log"); a dbm.dumb shelf as one entry,
    its .dat's (`kept_in`)."""
    names = run_files(run_dir)
    indexes = {index for name in names for index in kept_in(run_dir, name)[1:]}
    state = {name: read_entry(os.path.join(run_dir, name)) for name in names if name not in indexes}
    return dict(sorted(state.items()))


def read_entry(path: str) -> dict | list | str:
    """One entry of a state: a SQLite file's tables, a dbm.dumb shelf's entries, a file's lines."""
    if is_database(path):
        return read_tables(path)
    return read_shelf(path) if dumb_dbm(path) else read_lines(path)


def kept_in(run_dir: str, name: str) -> tuple[str, ...]:
    """The files a state's entry `name` is read from: a dbm.dumb shelf's .dat with its index
    and the index's backup (those there or not), one entry; any other file, itself."""
    if not dumb_dbm(os.path.join(run_dir, name)):
        return (name,)
    stem = name.removesuffix(".dat")
    return (name, *(stem + kind for kind in DBM_INDEX))


def dumb_dbm(path: str) -> bool:
    """Whether `path` is a dbm.dumb database's .dat: as `dbm.open` (and so `shelve.open`)
    tells, by the index beside it (`dbm.whichdb`, which only reads)."""
    stem, kind = os.path.splitext(path)
    if kind != ".dat":
        return False
    import dbm  # here, as dbm.dumb and pickle below: few runs keep a shelf, and a worker's
    # start is the hot path (with dbm.dumb's ast, about 12 ms)

    return dbm.whichdb(stem) == "dbm.dumb"


def run_files(run_dir: str, folder: str = "") -> list[str]:
    """The run's files in `folder` of the run folder and in its folders (`run_folder`), by
    their paths in the run folder: not the lab's own (the trace, a folder's marker, a worker's
    output), nor SQLite's journals."""
    found = []
    with os.scandir(os.path.join(run_dir, folder)) as entries:
        for entry in entries:
            name = os.path.join(folder, entry.name)
            if entry.is_dir(follow_symlinks=False):
                found += run_files(run_dir, name) if run_folder(name) else []
            elif not (
                entry.name.endswith(SKIPPED) or labs_own_file(run_dir, name) or not entry.is_file()
            ):
                found.append(name)
    return found


def run_folder(name: str) -> bool:
    """Whether a folder in the run folder (`name`, its path there) holds files of the run:
    the reader's folders do (a dot-folder too); the lab's own (`labs_own_name`) and the copies
    of a point's crash state that the recoveries after its other restarts run in do not."""
    return not labs_own_name(os.path.basename(name)) and name not in COPIES


def is_database(path: str) -> bool:
    """A SQLite file, whatever its name: known by its header."""
    return read_file(path, len(HEADER)) == HEADER


def unreadable(state: dict) -> list[str]:
    """The files of a state that are neither SQLite nor text: their crash states go unjudged."""
    return [name for name, content in state.items() if isinstance(content, str)]


def read_tables(path: str) -> dict[str, list[list]]:
    """Every user table of one SQLite file (its WAL included), through a connection of its own."""
    db = REAL_CONNECT(path, isolation_level=None)
    try:
        # the last connection to a WAL file checkpoints it as it closes: without waiting for
        # the disk (the state is the same; `skip_disk_waits` says why), not 10 ms a file
        db.execute("PRAGMA synchronous=OFF")
        names = db.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
        return {
            name: [[plain(v) for v in row] for row in db.execute(f"SELECT * FROM {quoted(name)}")]
            for (name,) in names
        }
    except sqlite3.OperationalError:  # a database it could not read (locked): no empty state
        raise
    except sqlite3.DatabaseError:  # not a database (yet): a half-written or foreign file
        return {}
    finally:
        db.close()


def plain(value: object) -> object:
    """A column value as JSON can carry it: a blob as its SHA-256 (a checkpoint's bytes)."""
    if isinstance(value, bytes):
        return digest(value)
    return value


def digest(data: bytes) -> str:
    """Bytes as a short SHA-256: equal bytes, equal digests."""
    return "sha256:" + hashlib.sha256(data).hexdigest()[:16]


def read_lines(path: str) -> list | str:
    """A file's lines: JSON lines as dicts without VOLATILE fields, other lines as text;
    UNREADABLE with its bytes' digest if it is not text."""
    try:
        with open(path, encoding="utf-8") as lines:
            return [without_volatile(line.rstrip("\n")) for line in lines if line.strip()]
    except UnicodeDecodeError:
        return unread(path)


def unread(*paths: str) -> str:
    """Files no checker reads, as a state holds them: UNREADABLE with their bytes' digest."""
    data = b""
    for path in paths:
        with open(path, "rb") as file:
            data += file.read()
    return f"{UNREADABLE}, {digest(data)}"


def read_shelf(path: str) -> list | str:
    """A dbm.dumb shelf (`path` its .dat) as dbm.dumb reads it: the values its index points at,
    so neither their offsets nor .bak's old index nor .dat's bytes no key points at are part of
    it. A line a key, {"ada": 500}, if every value is a pickle of plain data (shelve's); else
    UNREADABLE, with a digest of its keys and values: not judged, but told apart. An index a
    crash cut mid-line, which dbm.dumb cannot read either: UNREADABLE, by its files' bytes."""
    import dbm.dumb

    stem = path.removesuffix(".dat")
    try:
        with dbm.dumb.open(stem, "r") as shelf:  # "r": it writes nothing, not even on close
            entries = sorted((key, shelf[key]) for key in shelf)
    except Exception:  # the index is read by ast.literal_eval: a cut line fails in many ways
        return unread(path, stem + ".dir")
    try:
        return [{key.decode(errors="backslashreplace"): plain_data(v)} for key, v in entries]
    except Exception:  # no pickle of plain data: unpickling foreign bytes fails in many ways
        return f"{UNREADABLE}, {digest(repr(entries).encode())}"


def plain_data(pickled: bytes) -> object:
    """A pickle's value if it is plain data, what JSON carries: numbers, strings, lists,
    dicts, None (a tuple as a list); raises for any other. Its unpickler imports nothing: a
    pickle of a class, a function or any object but plain data is refused before it is made,
    so reading one runs none of its code."""
    import io
    import pickle

    class PlainDataUnpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> type:
            raise pickle.UnpicklingError(f"{module}.{name} is not plain data")

    return json.loads(json.dumps(PlainDataUnpickler(io.BytesIO(pickled)).load()))


def without_volatile(line: str) -> object:
    try:
        record = json.loads(line)
    except ValueError:
        return line
    if isinstance(record, dict):
        return {k: v for k, v in record.items() if k not in VOLATILE}
    return record


def state_digest(run_dir: str) -> str:
    """A short fingerprint of `read_state`: equal crash states, equal digests."""
    text = json.dumps(read_state(run_dir), sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
