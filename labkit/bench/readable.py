"""Which descriptors can be read, waited for with `poll`: `select` refuses a descriptor numbered
past 1024, and a long-lived kernel that holds many files gets such numbers for its pipes and
pidfds. Worker-side: standard library only.
"""

from __future__ import annotations

import select
from collections.abc import Iterable

__all__ = ["readable"]


def readable(fds: Iterable[int], timeout: float | None) -> list[int]:
    """Those of `fds` that can be read now, or once one can within `timeout` seconds (None: for
    as long as it takes). A pipe at end-of-file can be, and a pidfd whose process has ended."""
    waiting = select.poll()
    for fd in fds:
        waiting.register(fd, select.POLLIN)
    return [fd for fd, _ in waiting.poll(None if timeout is None else timeout * 1000)]
