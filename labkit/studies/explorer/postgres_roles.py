"""Each run's own Postgres role, owning its schema and nothing else (least privilege).

The reader's connections log in as that role itself (`run_url`: its name, and a libpq
password file made for the run), never as the lab's user: a `RESET ROLE` or `SET ROLE` in
the reader's code has no other role to go back to, and a statement that reaches outside the
run's schema (`INSERT INTO public.orders`, a CREATE TABLE there) is refused by the server,
never done unseen: the watch of Postgres writes notes the refusal as a write outside the run
(`postgres_writes`), and the matrix is never green. What the server lets every role do
(PUBLIC's rights, which the lab leaves as they are on a reader's server; its own takes
back PUBLIC's CREATE in public as it starts, as Postgres 15 does: `close_public`) is checked
by the server side too: anything the role owns outside its schema after a run (a table
made in `public`, which servers older than 15 let PUBLIC do) is a write outside
(`owned_outside`), and a table outside that PUBLIC may change is refused at the start, named
(`check_first_run`).

The role may log in, and nothing more: no superuser, CREATEDB, CREATEROLE, replication or
row-security bypass; it inherits nothing, its search path is its schema alone, and it
expires in a day, should a crash of the lab leave it. Its password is random, given to the
server only as a SCRAM (or md5) verifier made here, so it is in no statement a server log
may keep, in no command line and no job: libpq reads it from a 0600 file outside the run
folders. The lab's user becomes a member only to drop it. Every name goes through
psycopg.sql. Kernel side: only where an exploration has a server.
"""

from __future__ import annotations

import datetime
import os
import secrets
import urllib.parse
from collections.abc import Callable

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from labkit.bench.errors import refusal
from labkit.bench.postgres import connect, new_schema, redacted

__all__ = ["check_first_run", "give_own_role", "new_run", "owned_outside", "run_url"]

LEAST = "LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS"
LIFETIME = datetime.timedelta(days=1)  # a role the lab could not drop stops logging in
WRITES = "INSERT, UPDATE, DELETE, TRUNCATE"
SYSTEM = ("pg_catalog", "information_schema", "pg_toast")


def give_own_role(conn: psycopg.Connection, schema: str, passfile: str) -> str:
    """A role named as the run's `schema` (labkit_ and 12 hex digits: unique), made its owner,
    with a new password written to `passfile` (libpq's format, 0600, made here); the lab's
    user (`conn`'s) is made a member, to drop it. Its name."""
    name = sql.Identifier(schema)
    password = secrets.token_urlsafe(32)
    verifier = conn.pgconn.encrypt_password(password.encode(), schema.encode())
    until = (datetime.datetime.now(datetime.UTC) + LIFETIME).isoformat()
    made = os.open(passfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(made, "w") as file:
        file.write(f"*:*:*:{schema}:{password}\n")
    conn.execute(
        sql.SQL("CREATE ROLE {} " + LEAST + " PASSWORD {} VALID UNTIL {}").format(
            name, sql.Literal(verifier.decode()), sql.Literal(until)
        )
    )
    conn.execute(sql.SQL("GRANT {} TO CURRENT_USER").format(name))
    conn.execute(sql.SQL("ALTER SCHEMA {} OWNER TO {}").format(name, name))
    conn.execute(sql.SQL("ALTER ROLE {} SET search_path TO {}").format(name, name))
    return schema


def run_url(url: str, role: str, passfile: str) -> str:
    """The URL of the server at `url` (its hosts, port, database and other options), for
    `role`, whose password libpq reads in `passfile`: the lab's user and password are not
    in it."""
    params = conninfo_to_dict(url)
    for secret in ("user", "password", "passfile", "service", "servicefile"):
        params.pop(secret, None)
    database = params.pop("dbname", None) or role
    query = urllib.parse.urlencode({**params, "passfile": passfile}, safe="/")
    return f"postgresql://{urllib.parse.quote(role)}@/{urllib.parse.quote(database)}?{query}"


def new_run(
    url: str, run_dir: os.PathLike, made: list[str], passfile: Callable[[str], str]
) -> tuple[str, str]:
    """A run's schema and its own role, on the server at `url` (the schema into `made` at
    once, for the exploration to drop whatever happens), its password in `passfile(schema)`;
    the schema's name and the database.
    A user that may not make them is one line that says what it needs."""
    try:
        made.append(new_schema(url, run_dir))
        with connect(url) as conn:
            give_own_role(conn, made[-1], passfile(made[-1]))
            return made[-1], conn.info.dbname
    except psycopg.errors.InsufficientPrivilege as error:
        reason = str(error).strip().splitlines()[0]
        raise refusal("explore_pg_no_rights", url=redacted(url), reason=reason) from None


def check_first_run(url: str, role_url: str) -> None:
    """Log in as a run's role (`role_url`), as its code will, and refuse a server where it may
    not, or where it may change a table outside its schema (PUBLIC was given the right: the
    lab does not take it back, and could not see such a write), each in one line."""
    try:
        conn = psycopg.connect(role_url, autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as error:
        said = str(error).strip().splitlines()
        reason = said[0].rsplit("failed: ", 1)[-1].strip() if said else "no answer"
        raise refusal("explore_pg_no_login", url=redacted(url), reason=reason) from None
    with conn:
        found = conn.execute(
            "SELECT format('%%I.%%I', n.nspname, c.relname) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE c.relkind IN ('r', 'p', 'v', 'f') AND n.nspname <> current_user"
            " AND n.nspname <> ALL(%s) AND n.nspname NOT LIKE 'pg\\_temp\\_%%'"
            " AND has_table_privilege(c.oid, %s) ORDER BY 1 LIMIT 1",
            (list(SYSTEM), WRITES),
        ).fetchone()
    if found:
        raise refusal("explore_pg_public_writes", url=redacted(url), table=found[0])


def owned_outside(conn: psycopg.Connection, role: str) -> list[str]:
    """What `role` (a run's) owns outside its schema, on the whole server: made there by the
    run's code, in any database (a temporary table goes with its session: not counted). Each
    as Postgres's own description ("table public.audit"), or "in database <oid>"."""
    rows = conn.execute(
        "SELECT CASE WHEN d.dbid = here.oid THEN (SELECT format('%%s %%s', o.type, o.identity)"
        "   FROM pg_identify_object(d.classid, d.objid, d.objsubid) o"
        "   WHERE o.schema IS DISTINCT FROM %s AND o.identity IS DISTINCT FROM %s"
        "   AND coalesce(o.schema, '') NOT LIKE 'pg\\_temp\\_%%'"
        "   AND coalesce(o.schema, '') NOT LIKE 'pg\\_toast\\_temp\\_%%')"
        " ELSE format('in database %%s', d.dbid) END"
        " FROM pg_shdepend d, pg_database here"
        " WHERE here.datname = current_database() AND d.deptype = 'o'"
        " AND d.refclassid = 'pg_authid'::regclass"
        " AND d.refobjid = (SELECT oid FROM pg_roles WHERE rolname = %s)",
        (role, role, role),
    ).fetchall()
    return sorted({row[0] for row in rows if row[0]})
