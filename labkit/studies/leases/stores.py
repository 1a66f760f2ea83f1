"""The task table, the receiver's file, the lab's clock, and the statements that claim a task.

`tasks.db` holds one task row: its state, owner, fencing token and lease expiry (in the lab's
milliseconds). `receiver.db` holds the document the task writes: the receiver is a storage
service, and with fencing it refuses a token lower than the highest it has accepted, in the
same transaction as the write (Kleppmann's tokens 33 and 34). Every write that changed the
document is logged in `applied`, every refusal in `refused`. Worker-side: standard library only.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterator

__all__ = [
    "CLAIMS",
    "DOCUMENT",
    "FILES",
    "FIRST_FENCE",
    "LOCK_POINT",
    "RECEIVER_FILE",
    "TASK",
    "TASKS_FILE",
    "connect",
    "create_files",
    "finish",
    "holds",
    "lab_now",
    "landed",
    "note_applied",
    "receive_fenced",
    "receive_unfenced",
    "refuse",
    "renew_by_name",
    "set_clock",
]

TASKS_FILE = "tasks.db"
RECEIVER_FILE = "receiver.db"
FILES = (TASKS_FILE, RECEIVER_FILE)
CLOCK_FILE = "clock"  # the lab's time in milliseconds: the parent moves it, workers read it
TASK = "job-17"
DOCUMENT = "report-17"
FIRST_FENCE = 32  # the next claim gets 33, the one after 34: Kleppmann's numbers
LOCK_POINT = "holding_write_lock"  # a LangGraph resumer inside a checkpoint write, COMMIT next

TASKS_SCHEMA = f"""
CREATE TABLE task(
    id TEXT PRIMARY KEY,
    state TEXT NOT NULL,            -- open, claimed, done
    owner TEXT,                     -- the claiming worker's name
    fence INTEGER NOT NULL,         -- the fencing token: one more at every claim
    lease_until INTEGER             -- lab milliseconds; the lease is held while now < lease_until
);
INSERT INTO task VALUES('{TASK}', 'open', NULL, {FIRST_FENCE}, NULL);
"""
RECEIVER_SCHEMA = f"""
CREATE TABLE document(id TEXT PRIMARY KEY, body TEXT NOT NULL, writer TEXT, fence INTEGER NOT NULL);
INSERT INTO document VALUES('{DOCUMENT}', '', NULL, 0);
CREATE TABLE applied(seq INTEGER PRIMARY KEY, writer TEXT, fence INTEGER, body TEXT);
CREATE TABLE refused(seq INTEGER PRIMARY KEY, writer TEXT, fence INTEGER, highest INTEGER);
"""


def connect(run_dir: str, name: str) -> sqlite3.Connection:
    """A connection in autocommit mode: every transaction is the one its code opens."""
    return sqlite3.connect(os.path.join(run_dir, name), isolation_level=None, timeout=5.0)


def create_files(run_dir: str) -> None:
    """The task row (open, token 32) and the receiver's empty document; the clock at 0."""
    for name, schema in ((TASKS_FILE, TASKS_SCHEMA), (RECEIVER_FILE, RECEIVER_SCHEMA)):
        with contextlib.closing(connect(run_dir, name)) as db:
            db.executescript(schema)
    set_clock(run_dir, 0)


def set_clock(run_dir: str, ms: int) -> None:
    """Move the lab's clock (a whole file replaced at once: a reader never sees half of it)."""
    draft = os.path.join(run_dir, CLOCK_FILE + ".new")
    with open(draft, "w") as out:
        out.write(str(ms))
    os.replace(draft, os.path.join(run_dir, CLOCK_FILE))


def lab_now(run_dir: str) -> int:
    """The lab's time: a lease expires when the lab says so, never when a loaded machine
    happens to be slow, so every schedule ends the same way on every run."""
    with open(os.path.join(run_dir, CLOCK_FILE)) as clock:
        return int(clock.read())


@contextlib.contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on an error): the write lock from the start."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


# --- claims: each returns the fencing token it won, or None --------------------------------

Stop = Callable[[str], None]  # a point where the worker may be stopped (its gate)


def claim_select_then_update(
    db: sqlite3.Connection, me: str, now: int, lease_ms: int, stop: Stop
) -> int | None:
    """Read the state, then claim in a second statement: both workers can read 'open'."""
    state, fence = db.execute("SELECT state, fence FROM task WHERE id=?", (TASK,)).fetchone()
    if state != "open":
        return None
    stop("checked")  # read, not yet claimed: the other worker can read 'open' too
    db.execute(
        "UPDATE task SET state='claimed', owner=?, fence=? WHERE id=?", (me, fence + 1, TASK)
    )
    return fence + 1


def claim_conditional(
    db: sqlite3.Connection, me: str, now: int, lease_ms: int, stop: Stop
) -> int | None:
    """One statement claims only an open task: one worker wins, but a frozen winner holds
    the task forever (there is no lease)."""
    rows = db.execute(
        "UPDATE task SET state='claimed', owner=?, fence=fence+1 "
        "WHERE id=? AND state='open' RETURNING fence",
        (me, TASK),
    ).fetchall()
    return rows[0][0] if rows else None


def claim_lease(db: sqlite3.Connection, me: str, now: int, lease_ms: int, stop: Stop) -> int | None:
    """One statement claims an open task or one whose lease has expired (now >= lease_until),
    sets a new lease and takes the next fencing token."""
    rows = db.execute(
        "UPDATE task SET state='claimed', owner=:me, fence=fence+1, lease_until=:now+:lease "
        "WHERE id=:task AND (state='open' OR (state='claimed' AND lease_until <= :now)) "
        "RETURNING fence",
        {"me": me, "now": now, "lease": lease_ms, "task": TASK},
    ).fetchall()
    return rows[0][0] if rows else None


CLAIMS = {
    "select_then_update": claim_select_then_update,
    "conditional_update": claim_conditional,
    "lease": claim_lease,
    "lease_with_fence": claim_lease,
    "renew_by_name": claim_lease,
}


def renew_by_name(db: sqlite3.Connection, me: str, now: int, lease_ms: int) -> bool:
    """The bug: a heartbeat that renews whatever row carries my name. A replacement that
    runs under the same name (a restarted worker) has its lease extended by the stalled one,
    which takes the success for proof that it still holds the task, and writes."""
    cursor = db.execute(
        "UPDATE task SET lease_until=? WHERE id=? AND owner=?",
        (now + lease_ms, TASK, me),
    )
    return cursor.rowcount == 1


def finish(db: sqlite3.Connection, fence: int) -> bool:
    """Mark the task done, if the claim with this token still holds it."""
    cursor = db.execute(
        "UPDATE task SET state='done' WHERE id=? AND fence=? AND state='claimed'", (TASK, fence)
    )
    return cursor.rowcount == 1


# --- the receiver ---------------------------------------------------------------------------


def note_applied(db: sqlite3.Connection, writer: str, fence: int, body: str) -> None:
    """Log a write that changed the document (in the write's transaction, where it can be)."""
    db.execute("INSERT INTO applied(writer, fence, body) VALUES(?, ?, ?)", (writer, fence, body))


def holds(db: sqlite3.Connection, body: str) -> bool:
    """Whether the document holds `body` now: a reader's receiver is judged by the file."""
    row = db.execute("SELECT body FROM document WHERE id=?", (DOCUMENT,)).fetchone()
    return row[0] == body


def landed(db: sqlite3.Connection, writer: str, fence: int, body: str) -> bool:
    """Whether the document holds `body` now, noted in `applied` unless its last row is this
    write already: a write is noted as it lands, in the order writes landed, and again only if
    it lands again over another one."""
    if not holds(db, body):
        return False
    last = db.execute("SELECT body FROM applied ORDER BY seq DESC LIMIT 1").fetchone()
    if last != (body,):
        note_applied(db, writer, fence, body)
    return True


def refuse(db: sqlite3.Connection, writer: str, fence: int) -> None:
    """Note a refused write, with the highest token the receiver had accepted."""
    (highest,) = db.execute("SELECT fence FROM document WHERE id=?", (DOCUMENT,)).fetchone()
    db.execute(
        "INSERT INTO refused(writer, fence, highest) VALUES(?, ?, ?)", (writer, fence, highest)
    )


def receive_fenced(db: sqlite3.Connection, writer: str, fence: int, body: str) -> bool:
    """Write unless a higher token has been accepted: the check is the write's own WHERE, in
    the write's own transaction, so no pause can fall between them."""
    with transaction(db):
        cursor = db.execute(
            "UPDATE document SET body=?, writer=?, fence=? WHERE id=? AND fence <= ?",
            (body, writer, fence, DOCUMENT, fence),
        )
        if cursor.rowcount == 1:
            note_applied(db, writer, fence, body)
        else:
            refuse(db, writer, fence)
    return cursor.rowcount == 1


def receive_unfenced(db: sqlite3.Connection, writer: str, fence: int, body: str) -> bool:
    """Write whatever comes: the token is stored, never checked."""
    with transaction(db):
        db.execute(
            "UPDATE document SET body=?, writer=?, fence=? WHERE id=?",
            (body, writer, fence, DOCUMENT),
        )
        note_applied(db, writer, fence, body)
    return True
