"""One Postgres server for the whole room, instead of lesson 7's server per participant:
each participant gets a role and a database of their own (the lab makes its schema per run
inside it), and nothing on anyone else's.

Least privilege: the roles may log in and nothing more (no superuser, no CREATEDB, no
CREATEROLE, no replication); each database belongs to its participant's role alone, and
PUBLIC loses CONNECT on every database, so a role reaches only its own. One thing more: in
their own database a role may read the server's pg_hba rules (lesson 7's guard cell shows how
the server lets people in, read from the server itself), and nothing else of the server's.
Every identifier and the passwords go through psycopg.sql. The server listens on 127.0.0.1
only, scram-sha-256 for every connection; a participant's password is in a file in their home
(0600, theirs), which their URL names: the URL itself holds no secret.

Lesson 7's guard cell and its runs use the room's server; its server crashes (`crash_sweep`)
still start a server of the participant's own for a moment: that server is killed on purpose,
and the room's must not be.
"""

from __future__ import annotations

import pwd
import secrets
from urllib.parse import quote

from labkit.bench.folders import new_run_dir, outlive_call
from labkit.bench.postgres import connect
from labkit.bench.postgres.local_server import LocalServer, forget
from labkit.hub.participants import write_private

PASSFILE = ".labkit-room-pgpass"  # in each participant's home
RUN_PREFIX = "room-postgres-"  # its folder's, in the runs home


class RoomPostgres:
    """The room's server on 127.0.0.1:`port` (run as labkit-postgres when started by root),
    its folder a run folder of the runs home's, in use until it stops: one that a killed hub
    leaves is `labkit clean`'s to remove, like any run's."""

    def __init__(self, port: int, max_connections: int = 400) -> None:
        self.port = port
        self.folder = new_run_dir(None, prefix=RUN_PREFIX)
        outlive_call(self.folder)  # until it stops, whichever call made it
        settings = {"listen_addresses": "127.0.0.1", "port": str(port),
                    "max_connections": str(max_connections)}  # fmt: skip
        self.server = LocalServer(self.folder, settings)
        self.admin_url = ""

    def start(self) -> RoomPostgres:
        """Start it and close its own databases to PUBLIC; stopped and removed on a failure."""
        try:
            # its socket is named for the port too: the admin's way in (root's), not the room's
            self.admin_url = f"{self.server.start()}&port={self.port}"
            with connect(self.admin_url) as admin:
                for database in ("postgres", "template1"):
                    admin.execute(revoke_connect(database))
        except BaseException:
            self.stop()
            raise
        return self

    @property
    def pid(self) -> int | None:
        return self.server.pid

    def admit(self, name: str) -> str:
        """A role and a database for the participant `name`; the URL they connect with."""
        from psycopg import sql

        password = secrets.token_hex(24)
        role = sql.Identifier(name)
        with connect(self.admin_url) as admin:
            # the server is given a verifier, never the password: no log it keeps holds it
            verifier = admin.pgconn.encrypt_password(password.encode(), name.encode()).decode()
            admin.execute(
                sql.SQL(
                    "CREATE ROLE {} LOGIN PASSWORD {} NOSUPERUSER NOCREATEDB NOCREATEROLE"
                    " NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 40"
                ).format(role, sql.Literal(verifier))
            )
            admin.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(role, role))
            admin.execute(revoke_connect(name))
            admin.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(role, role))
        with connect(f"{self.admin_url}&dbname={quote(name)}") as theirs:
            # lesson 7's guard cell reads, as the participant, how the server lets people in
            # (its pg_hba rules, closed to all but superusers): that view, in their database
            theirs.execute(sql.SQL("GRANT SELECT ON pg_hba_file_rules TO {}").format(role))
            theirs.execute(
                sql.SQL("GRANT EXECUTE ON FUNCTION pg_hba_file_rules() TO {}").format(role)
            )
        passfile = f"{pwd.getpwnam(name).pw_dir}/{PASSFILE}"
        write_private(name, passfile, f"127.0.0.1:{self.port}:*:{name}:{password}\n")
        return f"postgresql://{quote(name)}@127.0.0.1:{self.port}/{quote(name)}?passfile={passfile}"

    def stop(self) -> None:
        self.server.stop()
        forget(self.folder)


def revoke_connect(database: str):
    from psycopg import sql

    return sql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(sql.Identifier(database))
