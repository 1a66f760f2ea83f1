"""A run's own schema on a Postgres server: where a graph's nodes keep their rows, explored.

Given a server (`explore(..., postgres=URL)`, or "lab" for labkit's own), the exploration makes
a schema for every run it starts (the run without a crash, and each crash state's run, one per
restart: a crash state is made again for each, rather than copied, so that every schema's
sequences are its own) and drops them all at its end, with their roles. Each run has a role
of its own, which owns the schema and may do nothing outside it (`postgres_roles`): the
worker is given only that role's URL (`DATABASE_URL`, for code that reads it; its password
in a 0600 file, in a folder of the exploration's own beside the run folders, which `labkit
clean` removes if the exploration was killed), never the lab's, and `PGOPTIONS` puts the schema
first and alone on the search path of every connection libpq opens without options of its
own (the role's own setting says the same to any other driver). Unqualified names (`CREATE
TABLE IF NOT EXISTS orders`, `INSERT INTO orders`) then land in the run's schema; a name
qualified with another schema is refused by the server, and noted as a write outside the
run; what the role made outside it anyway (where PUBLIC may) is found by the lab after the
run. The schema's tables are part of the run's state, as "postgres <database>", rows sorted,
generated ids (serial and identity columns, numbered by sequences) read as null.
"""

from __future__ import annotations

import json
import os  # no pathlib, no typing: a step's worker imports this module as it starts

__all__ = ["RunSchemas", "enter_schema", "postgres_run", "read_schema", "run_options"]

STATE_KEY = "postgres {database}"
JOB_KEY = "run_schema"  # a job's field: the server, its database, the run's schema
# PostgresSaver's own tables (`postgres_saver`): LangGraph's state, no effect of the nodes', as
# `checkpoints.db` is not; known by its migrations' table, so that a reader's own table of the
# same name, without it, still counts
SAVER_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")


class RunSchemas:
    """The schemas of one exploration's runs: one made per run folder (commented as the
    lab's, for `labkit clean`), all dropped at the end (names checked: only labkit's own).
    Without a server, a run has none."""

    def __init__(self, postgres: str | None) -> None:
        self.url: str | None = None
        if postgres is not None:
            from labkit.bench.postgres import given_url, shared_url

            self.url = shared_url() if postgres == "lab" else given_url(postgres)
        self.made: list[str] = []
        self.database: str | None = None
        self.of_dir: dict[str, str] = {}  # a run folder's schema (and role)
        self.secrets: str | None = None  # a private folder of the runs' password files

    def passfile(self, schema: str) -> str:
        """Where the password of `schema`'s role goes: a run folder of this exploration's in
        the runs home (0700), in use until the exploration ends: one that a killed
        exploration leaves is `labkit clean`'s to remove, like any run's."""
        if self.secrets is None:
            from labkit.bench.folders import new_run_dir, outlive_call

            folder = new_run_dir(None, prefix="pg-roles-")
            outlive_call(folder)  # removed at the exploration's end, whichever call made it
            self.secrets = str(folder)
        return os.path.join(self.secrets, schema)

    def job_fields(self, run_dir: os.PathLike) -> dict:
        """The job's field that names the run's schema, made now ({} without a server)."""
        if self.url is None:
            return {}
        from labkit.studies.explorer.postgres_roles import check_first_run, new_run, run_url

        first = not self.made
        schema, self.database = new_run(self.url, run_dir, self.made, self.passfile)
        self.of_dir[str(run_dir)] = schema
        url = run_url(self.url, schema, self.passfile(schema))
        if first:
            check_first_run(self.url, url)
        return {JOB_KEY: {"url": url, "database": self.database, "schema": schema}}

    def outside(self, run_dir: os.PathLike) -> list[str]:
        """What the run in `run_dir` made outside its schema, as a write outside names it
        ("Postgres database shop (table public.audit)"); [] without a server."""
        schema = self.of_dir.get(str(run_dir))
        if schema is None:
            return []
        from labkit.bench.postgres import connect
        from labkit.studies.explorer.postgres_roles import owned_outside

        with connect(self.url) as conn:
            made = owned_outside(conn, schema)
        return [f"Postgres database {self.database} ({what})" for what in made]

    def __enter__(self) -> RunSchemas:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.secrets is not None:
            import contextlib
            from pathlib import Path

            from labkit.bench.folders import release_run_dir, remove_run_dir

            with contextlib.suppress(OSError):  # else `labkit clean`'s, once released
                remove_run_dir(Path(self.secrets))
            release_run_dir(Path(self.secrets))
        if not self.made:
            return
        from psycopg import sql

        from labkit.bench.postgres import checked_schema, connect
        from labkit.bench.postgres.schemas import drop_run_role

        with connect(self.url) as conn:
            for schema in self.made:
                name = sql.Identifier(checked_schema(schema))
                conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(name))
                drop_run_role(conn, schema, self.url)


def postgres_run(job: dict) -> tuple[str, str] | None:
    """The run's database and schema, if the exploration has a server."""
    run = job.get(JOB_KEY)
    return (run["database"], run["schema"]) if run else None


def enter_schema(job: dict) -> None:
    """This worker's connections (the reader's) go to its run's schema."""
    run = job.get(JOB_KEY)
    if run:
        os.environ["PGOPTIONS"] = run_options(job)
        os.environ["DATABASE_URL"] = run["url"]


def run_options(job: dict) -> str:
    """The options (libpq's) of a connection to the run's schema."""
    return f"-c search_path={job[JOB_KEY]['schema']}"


def read_schema(job: dict) -> dict:
    """The run's schema as part of its state: {"postgres <db>": {table: rows}}, or {}."""
    run = job.get(JOB_KEY)
    if not run:
        return {}
    import psycopg
    from psycopg import sql

    tables: dict[str, list[list]] = {}
    with psycopg.connect(run["url"], autocommit=True) as conn:
        columns = conn.execute(
            "SELECT table_name, column_name, column_default LIKE 'nextval(%%' OR"
            " is_identity = 'YES' FROM information_schema.columns WHERE table_schema = %s"
            " ORDER BY table_name, ordinal_position",
            (run["schema"],),
        ).fetchall()
        generated: dict[str, list[bool]] = {}
        for table, _, is_generated in columns:
            generated.setdefault(table, []).append(bool(is_generated))
        if SAVER_TABLES[-1] in generated:
            generated = {k: v for k, v in generated.items() if k not in SAVER_TABLES}
        for table, flags in generated.items():
            name = sql.Identifier(run["schema"], table)
            rows = conn.execute(sql.SQL("SELECT * FROM {}").format(name)).fetchall()
            tables[table] = sorted(
                (
                    [None if flag else plain(v) for v, flag in zip(row, flags, strict=True)]
                    for row in rows
                ),
                key=lambda row: json.dumps(row, default=repr),
            )
    return {STATE_KEY.format(database=run["database"]): tables}


def plain(value: object) -> object:
    """A column's value as JSON carries it: numbers, text, true and false, null as they are;
    anything else (a date, a decimal, a JSON document) as its text."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
