"""The hub-managed services and the roles that give them their scopes: the one function that
another service (the instructor's room, issue 30 part 4) adds itself to.
"""

from __future__ import annotations

import os
import sys

from labkit.hub.settings import Settings

CULLER_SCOPES = ["list:users", "read:users:activity", "read:servers", "delete:servers"]


def services(settings: Settings) -> tuple[list[dict], list[dict]]:
    """(JupyterHub.services, JupyterHub.load_roles) for this hub. Each service runs as
    `nobody` when the hub is root: it needs the hub's API, never a file of anyone's."""
    as_nobody = {"user": "nobody", "cwd": "/"} if os.geteuid() == 0 else {}
    culler = {
        "name": "idle-culler",
        "command": [
            sys.executable,
            "-m",
            "jupyterhub_idle_culler",
            f"--timeout={settings.cull_after}",
        ],
        **as_nobody,
    }
    culler_role = {"name": "idle-culler", "scopes": CULLER_SCOPES, "services": ["idle-culler"]}
    return [culler], [culler_role]
