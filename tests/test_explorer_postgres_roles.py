"""Each run explored on a Postgres server has a role of its own, which owns the run's schema
and may do nothing outside it (issue 25): its code logs in as that role, so that no RESET ROLE
leads back to the lab's user; a write named with another schema is refused in the run,
without a crash, and the exploration reports it as a write outside, never green. What PUBLIC
may do on the server (CREATE in public, before Postgres 15) is found after the run, or
refused at the start."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from labkit.bench import postgres
from labkit.bench.errors import LabError
from labkit.studies.explorer.replay import explore
from tests.test_postgres import own_server  # noqa: F401 - the module's server, a fixture

QUALIFIED = Path(__file__).parent / "outside" / "postgres_qualified.py"


@pytest.mark.parametrize(
    ("graph", "refused"),
    [
        ("insert_graph", "permission denied for table orders"),
        ("create_graph", "permission denied for schema public"),
        ("reset_graph", "permission denied for table orders"),
        ("set_none_graph", "permission denied for table orders"),
        ("set_lab_role_graph", 'permission denied to set role "postgres"'),
        ("authorization_graph", 'permission denied to set session authorization "postgres"'),
    ],
)
def test_a_write_outside_the_runs_schema_is_refused_and_reported_as_outside(
    own_server,  # noqa: F811 - the fixture imported above
    graph,
    refused,
):
    with postgres.connect(own_server.url) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS public.orders (id text)")
        conn.execute("DROP TABLE IF EXISTS public.audit")
    found = explore(f"{QUALIFIED}:{graph}", "graph", restart_at="now", postgres=own_server.url)
    assert found.outside == [f"Postgres database postgres ({refused})"], found.summary()
    assert not found.green and found.point(None).failed["code"] == "run_outside"
    assert f"({refused})" in found.summary()
    with postgres.connect(own_server.url) as conn:
        orders = conn.execute("SELECT count(*) FROM public.orders").fetchone()[0]
        audit = conn.execute("SELECT to_regclass('public.audit')").fetchone()[0]
        roles = conn.execute(r"SELECT rolname FROM pg_roles WHERE rolname LIKE 'labkit\_%'")
        left = roles.fetchall()
        conn.execute(sql.SQL("DROP TABLE {}").format(sql.Identifier("public", "orders")))
    assert (orders, audit) == (0, None)  # nothing landed outside the run's schema
    assert left == []  # each run's role dropped with its schema


@pytest.mark.parametrize("grant", ["", "CREATE ON DATABASE postgres"])
def test_a_user_that_may_not_make_a_schema_and_a_role_is_one_line(own_server, grant):  # noqa: F811
    """A reader's server whose user lacks CREATE on the database (no schema) or CREATEROLE (no
    role): one line that says what the user needs, and nothing of the run is left there."""
    with postgres.connect(own_server.url) as conn:
        conn.execute("DROP ROLE IF EXISTS plain_user")
        conn.execute("CREATE ROLE plain_user LOGIN PASSWORD 'plain-pw'")
        if grant:
            conn.execute(sql.SQL(f"GRANT {grant} TO plain_user"))
    url = f"postgresql://plain_user:plain-pw@/postgres?host={own_server.socket_folder}"
    try:
        with pytest.raises(LabError, match="it needs CREATE on the database and CREATEROLE") as e:
            explore(f"{QUALIFIED}:insert_graph", "graph", postgres=url)
        assert "plain-pw" not in str(e.value) and "\n" not in str(e.value)
        with postgres.connect(own_server.url) as conn:
            schemas = conn.execute(
                r"SELECT nspname FROM pg_namespace WHERE nspname LIKE 'labkit\_%'"
            )
            assert schemas.fetchall() == []
    finally:
        with postgres.connect(own_server.url) as conn:
            conn.execute("DROP OWNED BY plain_user")
            conn.execute("DROP ROLE plain_user")


@pytest.fixture
def public_may_create(own_server):  # noqa: F811 - the fixture imported above
    """The server as Postgres before 15 makes it: PUBLIC may CREATE in schema public."""
    with postgres.connect(own_server.url) as conn:
        conn.execute("DROP TABLE IF EXISTS public.audit")
        conn.execute("GRANT CREATE ON SCHEMA public TO PUBLIC")
    try:
        yield own_server
    finally:
        with postgres.connect(own_server.url) as conn:
            conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
            conn.execute("DROP TABLE IF EXISTS public.audit")


def test_a_table_made_in_public_where_public_may_is_a_write_outside(public_may_create):
    """The server lets the run's role make public.audit: the lab sees the role owns it after
    the run, reports the write outside, and drops it with the role."""
    url = public_may_create.url
    found = explore(f"{QUALIFIED}:create_graph", "graph", restart_at="now", postgres=url)
    assert found.outside == ["Postgres database postgres (table public.audit)"], found.summary()
    assert not found.green and found.point(None).failed["code"] == "run_outside"
    with postgres.connect(url) as conn:
        audit = conn.execute("SELECT to_regclass('public.audit')").fetchone()[0]
        roles = conn.execute(r"SELECT rolname FROM pg_roles WHERE rolname LIKE 'labkit\_%'")
        assert (audit, roles.fetchall()) == (None, [])


def test_a_table_public_may_change_is_refused_in_one_line(own_server):  # noqa: F811
    """A table outside the run's schema that every role may write: its writes could not be
    told from anyone's, so the exploration is refused, the table named, nothing left."""
    with postgres.connect(own_server.url) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS public.orders (id text)")
        conn.execute("GRANT INSERT ON public.orders TO PUBLIC")
    try:
        with pytest.raises(LabError, match=r"every role may change public\.orders") as e:
            explore(f"{QUALIFIED}:insert_graph", "graph", postgres=own_server.url)
        assert "\n" not in str(e.value)
    finally:
        with postgres.connect(own_server.url) as conn:
            conn.execute("DROP TABLE public.orders")
            left = conn.execute(r"SELECT rolname FROM pg_roles WHERE rolname LIKE 'labkit\_%'")
            assert left.fetchall() == []


def test_the_runs_code_gets_its_roles_url_only(own_server, tmp_path):  # noqa: F811
    """The URL a run's code is given names the run's role, not the lab's user, and holds no
    password: libpq reads it from a file only its owner may read, removed at the end."""
    from labkit.studies.explorer.postgres_runs import JOB_KEY, RunSchemas

    with RunSchemas(own_server.url) as schemas:
        run = schemas.job_fields(tmp_path)[JOB_KEY]
        with psycopg.connect(run["url"]) as conn:
            conn.execute("RESET ROLE")
            who = conn.execute("SELECT session_user, current_user").fetchone()
            path = conn.execute("SHOW search_path").fetchone()[0]
        passfile = schemas.passfile(run["schema"])
        mode = Path(passfile).stat().st_mode & 0o777
    assert who == (run["schema"], run["schema"]) and path == run["schema"]
    parts = urllib.parse.urlsplit(run["url"])
    assert (parts.username, parts.password) == (run["schema"], None)
    assert "passfile=" in run["url"] and mode == 0o600 and not Path(passfile).exists()


@pytest.fixture
def elsewhere(own_server):  # noqa: F811 - the fixture imported above
    """Another database on the server, whose schema public PUBLIC may CREATE in (as before
    Postgres 15); its URL."""
    other = own_server.url.replace("@/postgres?", "@/elsewhere?")
    with postgres.connect(own_server.url) as conn:
        conn.execute("DROP DATABASE IF EXISTS elsewhere WITH (FORCE)")
        conn.execute("CREATE DATABASE elsewhere")
    with postgres.connect(other) as conn:
        conn.execute("GRANT CREATE ON SCHEMA public TO PUBLIC")
    try:
        yield other
    finally:
        with postgres.connect(own_server.url) as conn:
            conn.execute("DROP DATABASE elsewhere WITH (FORCE)")


def test_a_table_made_in_another_database_is_outside_and_the_role_still_dropped(
    own_server,  # noqa: F811 - the fixture imported above
    elsewhere,
):
    """The run's role makes public.audit in another database: a write outside, never green;
    the lab drops what the role made there, and then the role."""
    found = explore(
        f"{QUALIFIED}:elsewhere_graph", "graph", restart_at="now", postgres=own_server.url
    )
    assert "Postgres database elsewhere" in found.outside, found.summary()
    assert not found.green and found.point(None).failed["code"] == "run_outside"
    with postgres.connect(elsewhere) as conn:
        audit = conn.execute("SELECT to_regclass('public.audit')").fetchone()[0]
    with postgres.connect(own_server.url) as conn:
        roles = conn.execute(r"SELECT rolname FROM pg_roles WHERE rolname LIKE 'labkit\_%'")
        assert (audit, roles.fetchall()) == (None, [])


def test_a_server_where_a_runs_role_may_not_log_in_is_one_line(own_server):  # noqa: F811
    """A server that lets no new role connect to the database (PUBLIC's CONNECT revoked, as
    some managed servers do): one line that says the run's role could not log in and why,
    before any run, and nothing of the run left there."""
    with postgres.connect(own_server.url) as conn:
        conn.execute("REVOKE CONNECT ON DATABASE postgres FROM PUBLIC")
    try:
        with pytest.raises(LabError, match="permission denied for database") as refused:
            explore(f"{QUALIFIED}:insert_graph", "graph", postgres=own_server.url)
        assert "\n" not in str(refused.value)
    finally:
        with postgres.connect(own_server.url) as conn:
            conn.execute("GRANT CONNECT ON DATABASE postgres TO PUBLIC")
    assert refused.value.code == "explore_pg_no_login"
    with postgres.connect(own_server.url) as conn:
        schemas = conn.execute(r"SELECT nspname FROM pg_namespace WHERE nspname LIKE 'labkit\_%'")
        roles = conn.execute(r"SELECT rolname FROM pg_roles WHERE rolname LIKE 'labkit\_%'")
        assert (schemas.fetchall(), roles.fetchall()) == ([], [])


def test_the_labs_own_server_lets_no_run_create_in_public_whatever_its_version(own_server):  # noqa: F811
    """Before Postgres 15, PUBLIC may CREATE in schema public (in every database, and in
    template1 for those made later): the lab's own server takes that back as it starts, so a
    run's CREATE TABLE public.audit is refused in the run, as on 15 and after."""
    template1 = own_server.url.replace("@/postgres?", "@/template1?")
    for url in (own_server.url, template1):
        with postgres.connect(url) as conn:
            conn.execute("DROP TABLE IF EXISTS public.audit")
            conn.execute("GRANT CREATE ON SCHEMA public TO PUBLIC")  # as before Postgres 15
    try:
        own_server.stop()
        own_server.start()
        template1 = own_server.url.replace("@/postgres?", "@/template1?")
        public_may = []
        for url in (own_server.url, template1):
            with postgres.connect(url) as conn:
                public_may += conn.execute(
                    "SELECT privilege_type FROM pg_namespace,"
                    " aclexplode(coalesce(nspacl, acldefault('n', nspowner))) a"
                    " WHERE nspname = 'public' AND a.grantee = 0"
                ).fetchall()
        found = explore(
            f"{QUALIFIED}:create_graph", "graph", restart_at="now", postgres=own_server.url
        )
    finally:  # the module's server as Postgres 15 makes it, for the tests after this one
        for url in (own_server.url, own_server.url.replace("@/postgres?", "@/template1?")):
            with postgres.connect(url) as conn:
                conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
                conn.execute("DROP TABLE IF EXISTS public.audit")
    assert public_may == [("USAGE",), ("USAGE",)]  # PUBLIC may look up names, not CREATE
    refused = "permission denied for schema public"
    assert found.outside == [f"Postgres database postgres ({refused})"], found.summary()
    assert not found.green and found.point(None).failed["code"] == "run_outside"
