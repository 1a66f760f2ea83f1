"""A cell's call that may start the trial server, in steps a reader sees.

The server's start (LangGraph imported once, its graphs run once) takes a second or two on a
quiet machine and ten on a busy one, and says nothing until it is ready. A cell that may be
the first to call it reports a step before the call, one once the server answers, and one
when the call is done; a Ctrl-C at any point stops it as any call's does.
"""

from __future__ import annotations

from collections.abc import Callable

from labkit.bench import server

__all__ = ["call_in_steps"]

READY = "os:getpid"  # a call that does nothing but answer: the server is up

Progress = Callable[[int, int, object], None]


def call_in_steps(function: str, progress: Progress | None = None, **kwargs: object) -> object:
    """`server.call(function, **kwargs)`; with `progress`, `progress(done, 2, None)` with done
    0 before anything runs, 1 once the server answers (started now, or already running) and 2
    when the call has returned."""
    if progress is None:
        return server.call(function, **kwargs)
    progress(0, 2, None)
    server.call(READY)
    progress(1, 2, None)
    result = server.call(function, **kwargs)
    progress(2, 2, None)
    return result
