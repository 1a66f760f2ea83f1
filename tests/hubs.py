"""A real hub for a test module: participants made as system users for it, its ports free
ones, its folders in a fresh one under /tmp (the room's user, labkit-hub, passes through it
to the room's own folder), and, whatever happens, the hub stopped, the users removed with all
they left, the folders removed."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from labkit.hub import participants
from labkit.hub.settings import Settings, free_ports
from labkit.hub.start import start, stop


@contextmanager
def hub_of(
    prefix: str, count: int, after_stop: Callable[[Settings], None] | None = None
) -> Iterator[Settings]:
    """A hub of `count` participants (`prefix`1..); `after_stop` looks at what is left once
    the hub has stopped, before the users are removed."""
    names = participants.names(count, prefix)
    participants.create(names)
    base = Path(tempfile.mkdtemp(prefix="labkit-hub-test-"))
    base.chmod(0o711)  # passed through, never listed
    settings = Settings(
        base / "state", tuple(names), participants.instructor(prefix), *free_ports(4)
    )
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
        shutil.rmtree(base, ignore_errors=True)
