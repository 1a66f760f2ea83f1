"""A real hub for a test module: participants made as system users for it, its ports free
ones, and, whatever happens, the hub stopped and the users removed with all they left."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from labkit.hub import participants
from labkit.hub.settings import Settings, free_ports
from labkit.hub.start import start, stop


@contextmanager
def hub_of(
    folder: Path, prefix: str, count: int, after_stop: Callable[[Settings], None] | None = None
) -> Iterator[Settings]:
    """A hub of `count` participants (`prefix`1..); `after_stop` looks at what is left once
    the hub has stopped, before the users are removed."""
    names = participants.names(count, prefix)
    participants.create(names)
    settings = Settings(folder, tuple(names), participants.instructor(prefix), *free_ports(4))
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
