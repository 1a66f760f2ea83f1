"""Settings → JupyterHub's configuration: every server on 127.0.0.1, each participant their
own system user (LocalProcessSpawner) running the lab's .venv, the lessons in their home,
JupyterHub's own SharedPasswordAuthenticator, the instructor as admin, the services of
services.py.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from labkit.bench.postgres.programs import ENV_URL
from labkit.hub import participants, passwords
from labkit.hub.proxy import COMMAND
from labkit.hub.services import room_environment, services
from labkit.hub.settings import ENV, Settings, load

BIN = Path(sys.prefix) / "bin"  # the lab's .venv: the hub runs from it, so do the servers
START_TIMEOUT = 180  # seconds a server may take to start (a room starting at once, 2 cores)
# A participant's server without what a workshop never uses: the language-server extension
# (no language server is installed) and the extension manager's PyPI queries (nobody installs
# an extension in a participant's server).
LEANER = ['--ServerApp.jpserver_extensions={"jupyter_lsp": False}',
          "--LabApp.extension_manager=readonly"]  # fmt: skip
# glibc's malloc keeps an arena per thread that allocates, up to 8 per core; a Jupyter server
# and a kernel run a dozen threads each: two arenas hold what they need.
MALLOC = {"MALLOC_ARENA_MAX": "2"}
# Lesson 7's crash sweep one server at a time (studies/postgres/crashes.py): four side by side
# were 60 MB of a participant's 340 MB peak, for seconds saved.
ONE_SERVER = {"LABKIT_CRASH_SERVERS_AT_ONCE": "1"}
KERNELS = Path(__file__).with_name("jupyter")
# jupyterhub-singleuser without four imports it never uses (lean_server.py): 34 MB a server
SERVER = [str(BIN / "python"), "-m", "labkit.hub.lean_server"]


def configure(c, settings: Settings | None = None) -> None:
    """Fill JupyterHub's config object `c` (from $LABKIT_HUB_SETTINGS when not given)."""
    settings = settings or load(os.environ[ENV])
    folder = settings.folder
    c.JupyterHub.ip = "127.0.0.1"
    c.JupyterHub.port = settings.port
    c.JupyterHub.hub_ip = "127.0.0.1"
    c.JupyterHub.hub_port = settings.hub_port
    c.JupyterHub.db_url = f"sqlite:///{folder / 'jupyterhub.sqlite'}"
    c.JupyterHub.cookie_secret_file = str(folder / "jupyterhub_cookie_secret")
    c.JupyterHub.pid_file = str(folder / "jupyterhub.pid")
    c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{settings.proxy_api_port}"
    c.ConfigurableHTTPProxy.auth_token = passwords.proxy_token(folder)
    c.ConfigurableHTTPProxy.command = [str(COMMAND)]
    c.ConfigurableHTTPProxy.pid_file = str(folder / "proxy.pid")

    c.JupyterHub.authenticator_class = "shared-password"
    c.SharedPasswordAuthenticator.user_password = passwords.participants_password(folder)
    c.SharedPasswordAuthenticator.admin_password = passwords.instructor_password(folder)
    c.Authenticator.allowed_users = set(settings.participants)
    c.Authenticator.admin_users = {settings.instructor}

    c.JupyterHub.spawner_class = "localprocess"
    c.Spawner.cmd = SERVER
    # Kernels on Unix sockets in the participant's own runtime folder, not on 127.0.0.1 ports:
    # with 30 servers picking free ports at once, two kernels took the same one and one died
    # (jupyter_client frees a port before its kernel binds it); and no other user sees them.
    c.Spawner.args = ["--KernelManager.transport=ipc", *LEANER]
    c.Spawner.ip = "127.0.0.1"
    c.Spawner.notebook_dir = "~"
    c.Spawner.default_url = "/lab/tree/notebooks/00_start_here.ipynb"
    c.Spawner.environment = {
        "PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin",
        **MALLOC,
        **ONE_SERVER,
        "JUPYTER_PATH": str(KERNELS),  # its python3 kernel: lean_kernel, without a debugger
        **room_environment(settings),
        **settings.environment,
    }
    c.Spawner.start_timeout = START_TIMEOUT
    c.Spawner.http_timeout = START_TIMEOUT
    c.Spawner.pre_spawn_hook = lambda spawner: before_spawn(spawner, settings)

    hub_services, roles = services(settings)
    c.JupyterHub.services = hub_services
    c.JupyterHub.load_roles = roles


def before_spawn(spawner, settings: Settings) -> None:
    """The lessons in the participant's home; their URL of the room's Postgres, if any."""
    name = spawner.user.name
    participants.copy_lessons(name)
    if name in settings.postgres_urls:
        spawner.environment = {**spawner.environment, ENV_URL: settings.postgres_urls[name]}
