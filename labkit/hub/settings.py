"""What one hub is: its folder, its participants, its instructor, its ports.

Kept as JSON in the hub's folder (mode 0700), so that `jupyterhub -f jupyterhub_config.py`,
started in a process of its own, configures the same hub that `python3 tasks.py hub` chose.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import asdict, dataclass, field
from pathlib import Path

ENV = "LABKIT_HUB_SETTINGS"  # the path of settings.json, for jupyterhub_config.py
FILE = "settings.json"


@dataclass(frozen=True)
class Settings:
    folder: Path  # the hub's own: its database, cookie secret, passwords, log (root's alone)
    participants: tuple[str, ...]  # system users, one per participant
    instructor: str  # the admin: logs in with the instructor's password
    port: int = 8000  # where participants connect (the proxy), on 127.0.0.1
    hub_port: int = 8081  # the hub's own API, on 127.0.0.1, for the proxy and the servers
    proxy_api_port: int = 8001  # the proxy's routes API, on 127.0.0.1, token-protected
    room_port: int = 8002  # the instructor's room (labkit/room), on 127.0.0.1, behind the proxy
    cull_after: int = 3600  # seconds a server may sit idle before the culler stops it
    environment: dict[str, str] = field(default_factory=dict)  # more for every server
    postgres_urls: dict[str, str] = field(default_factory=dict)  # the room's Postgres, by name

    @property
    def room_folder(self) -> Path:
        """The room's own folder, beside the hub's (hub/services.py makes it)."""
        return self.folder.parent / f"{self.folder.name}-room"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def save(self) -> Path:
        """Write settings.json (0600) in the hub's folder (made 0700 if missing)."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self.folder / FILE
        data = {**asdict(self), "folder": str(self.folder)}
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as out:
            json.dump(data, out, indent=1)
        return path


def load(path: str | os.PathLike) -> Settings:
    data = json.loads(Path(path).read_text())
    data["folder"] = Path(data["folder"])
    data["participants"] = tuple(data["participants"])
    return Settings(**data)


def free_ports(count: int) -> list[int]:
    """`count` ports free on 127.0.0.1 now (for a hub beside others: tests, benchmarks)."""
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports
