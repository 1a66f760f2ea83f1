"""Ctrl-C held back for a few lines that must not be cut in two.

Python raises KeyboardInterrupt at the first line its main thread runs after SIGINT arrived:
right after `os.fork()` returns, say, before the child's pid is kept anywhere, or right after
`os.waitpid()` has reaped a child, before its exit status is kept. A pid lost so is a process
nobody reaps; a status lost so is a child that is gone while the lab still thinks it runs (and
signals a pid that may be someone else's by then). Blocking SIGINT around such lines closes
both: a Ctrl-C that came before the block is raised as it begins (`signal.pthread_sigmask`
runs the pending handlers), one that comes during it as it ends, never in between.
Worker-side: standard library only.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

__all__ = ["ctrl_c_held"]


@contextlib.contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Run the block whole: a Ctrl-C is raised before it or after it, never inside it."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, [])  # the mask as it is, to be put back
    try:  # one that came just now is raised by the call that blocks, once it has: put back here
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
