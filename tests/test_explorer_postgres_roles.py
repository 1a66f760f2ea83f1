"""Each run explored on a Postgres server has a role of its own, which owns the run's schema
and may do nothing outside it (issue 25): a write named with another schema is refused in the
run, without a crash, and the exploration reports it as a write outside, never green."""

from __future__ import annotations

from pathlib import Path

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
