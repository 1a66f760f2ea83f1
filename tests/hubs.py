"""A real hub for a test module: participants made as system users for it, its ports free
ones, its folders in a fresh one under /tmp (the room's user, labkit-hub, passes through it
to the room's own folder), and, whatever happens, the hub stopped, the users removed with all
they left, the folders removed. And what runs of a hub, found by what the system says."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from labkit.hub import participants
from labkit.hub.settings import ENV, FILE, Settings, free_ports
from labkit.hub.start import start, stop


@contextmanager
def hub_of(
    prefix: str, count: int, after_stop: Callable[[Settings], None] | None = None
) -> Iterator[Settings]:
    """A hub of `count` participants (`prefix`1..); `after_stop` looks at what is left once
    the hub has stopped, before the users are removed."""
    names = participants.names(count, prefix)
    with hub_settings(prefix, names) as settings:
        participants.create(names)
        process = None
        try:
            process = start(settings)
            yield settings
        finally:
            if process is not None:
                stop(process)
                assert process.returncode is not None
                if after_stop is not None:
                    after_stop(settings)
            participants.remove(names)


@contextmanager
def hub_settings(prefix: str, names: list[str]) -> Iterator[Settings]:
    """A hub's settings for `names` (no user made): free ports, and its folder in a new one
    that every user may pass through (0711), removed after."""
    base = Path(tempfile.mkdtemp(prefix="labkit-hub-test-"))
    base.chmod(0o711)  # passed through, never listed
    try:
        yield Settings(
            base / "state", tuple(names), participants.instructor(prefix), *free_ports(4)
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)


def processes_of(settings: Settings) -> dict[int, str]:
    """This hub's processes that run now, by pid, each by its part: "keeper", "hub" and
    "proxy" (started with the hub's settings in their environment), or a service's name
    ("room", "idle-culler": the hub's API in theirs)."""
    started_with = f"{ENV}={settings.folder / FILE}".encode()
    hub_api = f":{settings.hub_port}/".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            command = (entry / "cmdline").read_bytes()
        except OSError:  # not a process, or gone meanwhile
            continue
        named = [v.split(b"=", 1)[1] for v in environ if v.startswith(b"JUPYTERHUB_SERVICE_NAME=")]
        if named and any(hub_api in v for v in environ if v.startswith(b"JUPYTERHUB_API_URL=")):
            found[int(entry.name)] = named[0].decode()
        elif started_with in environ:
            found[int(entry.name)] = part_of(command)
    return found


def part_of(command: bytes) -> str:
    """Which of the hub's own processes runs `command` (its /proc cmdline)."""
    if b"labkit.hub.keeper" in command:
        return "keeper"
    return "proxy" if b"configurable-http-proxy" in command else "hub"
