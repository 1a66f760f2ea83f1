"""A call to a network service as a write outside the run folder: a tool that POSTs to an
HTTP API (requests, httpx, urllib) makes its effect in another process's files, which no
crash state of the run holds and no replay can take back. The explorer cannot tell a read
from a write over a socket, so every TCP connection the reader's code opens is noted as
"outside" (`tcp://host:port`): the exploration fails rather than call the service again at
every crash point and then say green, and says so in words of its own (the explorer cannot
see a remote service's state; run the service inside the exploration, or pass a fake). The
run's own ticket service (`ticket_service()`, whose tickets are in the run folder) is the
run's. Worker-side: standard library only.
"""

from __future__ import annotations

import functools
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

from labkit.studies.explorer import services
from labkit.studies.explorer.report import SERVICE

if TYPE_CHECKING:
    from labkit.studies.explorer.record import CrashPoints

__all__ = ["watch_network"]

NETWORK = (socket.AF_INET, socket.AF_INET6)


def watch_network(points: CrashPoints) -> None:
    """In this process, each TCP connection opened (`connect`, `connect_ex`) is noted as a
    write outside the run folder, but one to the run's own ticket service."""

    def watched(connect: Callable[..., object]) -> Callable[..., object]:
        @functools.wraps(connect)
        def connecting(sock: socket.socket, address: object) -> object:
            if sock.family in NETWORK and isinstance(address, tuple) and not runs_own(address):
                points.note_outside(f"{SERVICE}{address[0]}:{address[1]}")
            return connect(sock, address)

        return connecting

    socket.socket.connect = watched(socket.socket.connect)
    socket.socket.connect_ex = watched(socket.socket.connect_ex)


def runs_own(address: tuple) -> bool:
    """Whether `address` is the run's own ticket service (lesson 5's, in the run folder)."""
    service = services._here.get("service")
    return service is not None and address[1] == service.port
