"""Each run's own Postgres role, owning its schema and nothing else (least privilege).

The reader's connections run as that role (`-c role=` in their options: `postgres_runs`), so
a statement that reaches outside the run's schema (`INSERT INTO public.orders`, a CREATE TABLE
there) is refused by the server, never done unseen: the watch of Postgres writes notes the
refusal as a write outside the run (`postgres_writes`), and the matrix is never green. The
role is made without login, superuser, CREATEDB, CREATEROLE, replication or row-security
bypass, and inherits nothing; the lab's own user becomes a member only to switch to it. What
PUBLIC may do on the server (USAGE on the public schema, a temporary table) it may do too:
the lab changes no one else's rights. Every name goes through psycopg.sql. Kernel side: only
where an exploration has a server.
"""

from __future__ import annotations

import os

import psycopg
from psycopg import sql

from labkit.bench.errors import refusal
from labkit.bench.postgres import connect, new_schema, redacted

__all__ = ["give_own_role", "new_run"]

LEAST = "NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS"


def give_own_role(conn: object, schema: str) -> str:
    """A role named as the run's `schema` (labkit_ and 12 hex digits: unique), made its owner;
    the lab's user (`conn`'s) may switch to it. Its name."""
    name = sql.Identifier(schema)
    conn.execute(sql.SQL("CREATE ROLE {} " + LEAST).format(name))
    conn.execute(sql.SQL("GRANT {} TO CURRENT_USER").format(name))
    conn.execute(sql.SQL("ALTER SCHEMA {} OWNER TO {}").format(name, name))
    return schema


def new_run(url: str, run_dir: os.PathLike, made: list[str]) -> tuple[str, str]:
    """A run's schema and its own role, on the server at `url` (the schema into `made` at
    once, for the exploration to drop whatever happens); the schema's name and the database.
    A user that may not make them is one line that says what it needs."""
    try:
        made.append(new_schema(url, run_dir))
        with connect(url) as conn:
            give_own_role(conn, made[-1])
            return made[-1], conn.info.dbname
    except psycopg.errors.InsufficientPrivilege as error:
        reason = str(error).strip().splitlines()[0]
        raise refusal("explore_pg_no_rights", url=redacted(url), reason=reason) from None
