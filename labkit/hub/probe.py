"""What one participant holds, and another's attempts on it: the hub's isolation, tried from
inside two participants' kernels (tests/test_hub.py, benchmarks/bench_workshop.py).

hold() runs in the owner's kernel: it starts what lessons 5 and 7 start (a ticket service,
a Postgres server) and says where everything is. reach(held) runs in another's kernel and
tries each door; every answer must be a refusal.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from labkit.bench.folders import new_run_dir, runs_home
from labkit.bench.postgres.programs import ENV_URL
from labkit.bench.postgres.shared import shared_url
from labkit.studies.unknown_outcome.caller import SECRET_FILE
from labkit.studies.unknown_outcome.experiment import ServiceProcess

REACHED = "reached"
_held: list[ServiceProcess] = []  # the owner's service, kept running for the others to try


def hold() -> str:
    """Start lesson 7's Postgres and lesson 5's ticket service; where they and this
    participant's files are, as JSON."""
    url = shared_url()
    service = ServiceProcess(new_run_dir(None, prefix="probe-") / "service").start()
    _held.append(service)
    home = runs_home()
    sockets = sorted(str(p) for p in home.rglob("*") if p.is_socket())
    return json.dumps({
        "runs_home": str(home), "home": os.path.expanduser("~"), "postgres": url,
        "service_port": service.port, "secret_file": str(service.folder / SECRET_FILE),
        "sockets": sockets, "room_postgres": os.environ.get(ENV_URL),
    })  # fmt: skip


def release() -> None:
    while _held:
        _held.pop().close()


class Refused(Exception):
    """A door that answered, and said no."""


def attempt(try_it) -> str:
    """REACHED, or the refusal (its exception's class and words)."""
    try:
        try_it()
    except Exception as error:  # every refusal counts: which one is kept in the answer
        return f"{type(error).__name__}: {error}".splitlines()[0][:200]
    return REACHED


def reach(held_json: str) -> str:
    """Every door of another participant's, tried: {door: REACHED or the refusal} as JSON."""
    import psycopg

    held = json.loads(held_json)
    url = held["postgres"]
    port = parse_qs(urlsplit(url).query).get("port", ["5432"])[0]

    def ticket_service() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", held["service_port"], timeout=10)
        connection.request("POST", "/tickets", body=b"{}")
        status = connection.getresponse().status
        connection.close()
        if status >= 400:
            raise Refused(f"HTTP {status}")

    def unix_socket(path: str) -> None:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(path)

    doors = {
        "runs_home": lambda: os.listdir(held["runs_home"]),
        "home": lambda: os.listdir(held["home"]),
        "service_secret": lambda: Path(held["secret_file"]).read_text(),
        "postgres_socket": lambda: psycopg.connect(url, connect_timeout=5).close(),
        "postgres_tcp": lambda: psycopg.connect(
            f"postgresql://postgres@127.0.0.1:{port}/postgres", connect_timeout=5
        ).close(),
        "ticket_service": ticket_service,
        **{f"socket {p}": (lambda p=p: unix_socket(p)) for p in held["sockets"]},
    }
    theirs, mine = held.get("room_postgres"), os.environ.get(ENV_URL)
    if theirs and mine:  # the room's server: their database as me, and them without a password
        their_database = urlsplit(theirs).path
        as_me = urlsplit(mine)._replace(path=their_database).geturl()
        doors["room_postgres_their_database"] = lambda: psycopg.connect(as_me).close()
        doors["room_postgres_as_them"] = lambda: psycopg.connect(theirs).close()
    return json.dumps({door: attempt(try_it) for door, try_it in doors.items()})
