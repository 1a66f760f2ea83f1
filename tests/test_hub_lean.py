"""The workshop's Jupyter server (labkit/hub/lean_server.py) is upstream's jupyterhub-singleuser
(Jupyter Server with JupyterHub's single-user extension) without the four imports it never
uses; whatever of them is used anyway says so instead of running without it. In a fresh
Python each time: the stand-ins must not reach this test process's own imports."""

from __future__ import annotations

import json
import subprocess
import sys

IMPORTS = """
import json, sys
{leave_out}
import jupyterhub.singleuser as singleuser
import jupyterlab.labapp
import jupyter_server.serverapp, jsonschema
heavy = ("alembic.runtime", "mako", "httpx", "rich", "jupyterhub.handlers.base", "lark")
app = getattr(singleuser.main, "__self__", singleuser.main)  # the app main launches
seen = {{"main": app.__module__, "loaded": [m for m in heavy if m in sys.modules]}}
import alembic.command
from jupyterhub.handlers.pages import HealthCheckHandler
from tornado.web import StaticFileHandler
seen["checks_iri"] = "iri" in jsonschema.FormatChecker.checkers
seen["checks_uri"] = "uri" in jsonschema.FormatChecker.checkers
seen["health_check"] = isinstance(object(), StaticFileHandler | HealthCheckHandler)
try:
    alembic.command.stamp("config", "head")
except Exception as error:  # upstream's alembic: a str is no alembic Config
    seen["refused"] = f"{{type(error).__name__}}: {{error}}"
print(json.dumps(seen))
"""
LEAN = "from labkit.hub import lean_server\nlean_server.leave_out()"


def imported(leave_out: str) -> dict:
    code = IMPORTS.format(leave_out=leave_out)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_workshop_server_is_the_hubs_extension_without_what_it_never_uses():
    upstream, lean = imported(""), imported(LEAN)
    assert upstream["main"] == lean["main"] == "jupyterhub.singleuser.extension"
    assert set(upstream["loaded"]) == {"alembic.runtime", "mako", "httpx", "rich",
                                       "jupyterhub.handlers.base", "lark"}  # fmt: skip
    assert lean["loaded"] == []
    assert upstream["checks_iri"] and not lean["checks_iri"]  # the one check left out
    assert upstream["checks_uri"] and lean["checks_uri"]  # the format Jupyter's events use
    assert lean["health_check"] is False
    assert lean["refused"] == (
        "RuntimeError: alembic.command.stamp is left out of a workshop's Jupyter server "
        "(labkit/hub/lean_server.py)"
    )
