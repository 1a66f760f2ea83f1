"""A reader's server (a URL), connections to either server, and one schema per run: made with a
note of whose it is, so that `clean_schemas` drops only what is provably the lab's and over.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import socket
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from labkit.bench.errors import LabError, check_instance, refusal
from labkit.bench.folders import marker_of
from labkit.bench.postgres.process_table import process_started
from labkit.bench.postgres.programs import ENV_URL

SCHEMA_PREFIX = "labkit_"
SCHEMA_NAME = re.compile(rf"{SCHEMA_PREFIX}[0-9a-f]{{12}}")  # exactly what new_schema makes


def given_url(url: str | None = None) -> str | None:
    """The reader's server: `url` if given, else $LABKIT_POSTGRES_URL, else None (labkit's
    own). Only the form is checked here; whether it answers is checked where it is used."""
    chosen = (os.environ.get(ENV_URL) or None) if url is None else url
    if chosen is None:
        return None
    check_instance("postgres_url", chosen, str, "postgres_url")
    try:
        scheme = urllib.parse.urlsplit(chosen).scheme
    except ValueError:  # a malformed host, such as an unclosed [
        scheme = ""
    if scheme not in ("postgresql", "postgres"):
        raise refusal("postgres_url", value=repr(redacted(chosen)), variable=ENV_URL)
    return chosen


def redacted(url: str) -> str:
    """The URL with its password, in the user part or the query (`?password=`), as ***: fit
    to be shown in a line or saved in a run folder."""
    before, question, query = url.partition("?")
    scheme, slashes, rest = before.partition("//")
    user, at, host = rest.rpartition("@")
    if at and ":" in user:
        before = f"{scheme}{slashes}{user.split(':', 1)[0]}:***@{host}"
    pairs = [
        "password=***" if urllib.parse.unquote(pair.split("=", 1)[0]) == "password" else pair
        for pair in query.split("&")
    ]
    return before + question + "&".join(pairs)


def connect(url: str, schema: str | None = None, **options: object):  # -> psycopg.Connection
    """A psycopg connection (autocommit unless told otherwise), its search_path on `schema`;
    a server that does not answer is one LabError line that says what to do."""
    import psycopg

    if schema:
        options["options"] = f"-c search_path={checked_schema(schema)}"
    options.setdefault("autocommit", True)
    try:
        return psycopg.connect(url, connect_timeout=10, **options)
    except psycopg.OperationalError as error:
        said = str(error).strip().splitlines()
        reason = said[0].rsplit("failed: ", 1)[-1].strip() if said else "no answer"
        raise refusal(
            "pg_unreachable", url=redacted(url), reason=reason, variable=ENV_URL
        ) from None


def close_public(url: str, port: str | None = None) -> None:
    """Take back PUBLIC's CREATE on schema public, in the server's `postgres` database and in
    template1 (whose copies later databases are), as Postgres 15 and after already do: on an
    older server every role, a run's too, could otherwise make a table there. The lab's own
    server only (at its `port`, if not 5432); a reader's server keeps PUBLIC's rights as they
    are. Committed locally: a server told to wait for a standby (lesson 7's) does not wait."""
    from psycopg import sql

    revoke = sql.SQL("REVOKE CREATE ON SCHEMA {} FROM PUBLIC").format(sql.Identifier("public"))
    where = {"port": port} if port else {}
    for database in ("postgres", "template1"):
        options = "-c synchronous_commit=local"
        with connect(url, dbname=database, options=options, **where) as conn:
            conn.execute(revoke)


def checked_schema(name: str) -> str:
    """A schema name exactly as `new_schema` makes them, or a LabError."""
    if not isinstance(name, str) or not SCHEMA_NAME.fullmatch(name):
        raise refusal("not_a_schema", name=repr(name), prefix=SCHEMA_PREFIX)
    return name


def new_schema(url: str, run_dir: Path) -> str:
    """A new schema for one run, named for it and commented with whose it is (this machine,
    this OS user, the run's folder, the process that made it), so that `clean_schemas` can
    prove it is this user's and that its run is over."""
    from psycopg import sql

    name = f"{SCHEMA_PREFIX}{secrets.token_hex(6)}"
    note = {
        "host": socket.gethostname(),
        "uid": os.getuid(),
        "run_dir": str(run_dir),
        "pid": os.getpid(),
        "started": process_started(os.getpid()),
    }
    with connect(url) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
        conn.execute(
            sql.SQL("COMMENT ON SCHEMA {} IS {}").format(
                sql.Identifier(name), sql.Literal(json.dumps(note))
            )
        )
    return name


def run_state(note: dict) -> str:
    """ "over", "going" or "unknown" for the run a schema's note names. Unknown is never over:
    a folder or marker this user may not read could be a live run's."""
    try:
        marker = marker_of(Path(note["run_dir"]))
    except FileNotFoundError:  # proof: a folder we may not search would say EACCES
        return "over"
    except OSError:
        return "unknown"
    if marker is None:  # a folder given with --out: over once the process that made it ended
        maker = process_started(note["pid"])
        return "going" if maker is not None and maker == note["started"] else "over"
    try:
        fcntl.flock(marker, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return "going"
    finally:
        os.close(marker)
    return "over"


LAB_NOTE = {"host": str, "uid": int, "run_dir": str, "pid": int, "started": (str, type(None))}


def lab_note(comment: str | None) -> dict | None:
    """A schema's comment as labkit writes it, or None: anything else is not the lab's."""
    try:
        note = json.loads(comment or "")
    except json.JSONDecodeError:
        return None
    if not isinstance(note, dict) or note.keys() != LAB_NOTE.keys():
        return None
    fits = all(isinstance(note[key], kind) for key, kind in LAB_NOTE.items())
    return note if fits and not isinstance(note["uid"], bool) else None


@dataclass
class SchemaCleaning:
    """What `clean_schemas` did: the schemas it dropped (or would), and those it left, each
    as "name (why)": another machine's or user's, a run that goes on or may, not the lab's."""

    dropped: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)


def clean_schemas(url: str, dry_run: bool = False) -> SchemaCleaning:
    """Drop the schemas this user's runs on this machine made on the server at `url` whose run
    is provably over. A schema whose name or comment is not exactly the lab's is left, and so
    is one whose run may go on."""
    from psycopg import sql

    done = SchemaCleaning()
    with connect(url) as conn:
        rows = conn.execute(
            "SELECT nspname, obj_description(oid, 'pg_namespace') FROM pg_namespace"
            " WHERE nspname LIKE %s ORDER BY nspname",
            (SCHEMA_PREFIX.replace("_", r"\_") + "%",),
        ).fetchall()
        for name, comment in rows:
            note = lab_note(comment) if SCHEMA_NAME.fullmatch(name) else None
            why = (
                "not the lab's: its name or comment is not as labkit makes them"
                if note is None
                else "another machine's"
                if note["host"] != socket.gethostname()
                else f"user {note['uid']}'s"
                if note["uid"] != os.getuid()
                else None
            )
            state = run_state(note) if why is None else ""
            if state == "going":
                why = "its run goes on"
            elif state == "unknown":
                why = f"its run folder {note['run_dir']} cannot be read: its run may go on"
            if why:
                done.left.append(f"{name!r} ({why})")
                continue
            if not dry_run:
                conn.execute(
                    sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name))
                )
                drop_run_role(conn, name, url)
            done.dropped.append(name)
    return done


def drop_run_role(conn: object, schema: str, url: str | None = None) -> None:
    """The role of the run whose schema this was (the explorer's: named as its schema), if it
    has one: what it still owns or may do first, in this database and (given the server's
    `url`) in any other it made something in. A role that still owns something stays (DROP ROLE
    refuses it), and so does the rest of its run's clean-up."""
    import psycopg
    from psycopg import sql

    name = sql.Identifier(checked_schema(schema))
    if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (schema,)).fetchone() is None:
        return
    elsewhere = conn.execute(
        "SELECT DISTINCT datname FROM pg_shdepend JOIN pg_database d ON d.oid = dbid"
        " WHERE refobjid = (SELECT oid FROM pg_roles WHERE rolname = %s)"
        " AND datname <> current_database()",
        (schema,),
    ).fetchall()
    for (database,) in elsewhere if url else ():
        with contextlib.suppress(LabError, psycopg.Error), connect(url, dbname=database) as other:
            other.execute(sql.SQL("DROP OWNED BY {}").format(name))
    try:
        with conn.transaction():
            conn.execute(sql.SQL("DROP OWNED BY {}").format(name))
            conn.execute(sql.SQL("DROP ROLE {}").format(name))
    except psycopg.errors.DependentObjectsStillExist:
        pass
