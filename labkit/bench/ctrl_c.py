"""Ctrl-C held back for a few lines that must not be cut in two.

Python raises KeyboardInterrupt at the first line its main thread runs after SIGINT arrived:
right after `os.fork()` returns, say, before the child's pid is kept anywhere, or right after
`os.waitpid()` has reaped a child, before its exit status is kept. A pid lost so is a process
nobody reaps; a status lost so is a child that is gone while the lab still thinks it runs (and
signals a pid that may be someone else's by then). Blocking SIGINT around such lines closes
both: a Ctrl-C that came before the block is raised as it begins (`signal.pthread_sigmask`
runs the pending handlers), one that comes during it as it ends, never in between.

Blocking is not enough in a process with other threads (a kernel has several): the system then
hands the SIGINT to a thread that does not block it, and Python still runs its handler in the
main thread, inside the block. So the main thread's handler is swapped too, for one that only
notes the Ctrl-C; the Ctrl-C noted is raised again as the block ends.
Worker-side: standard library only.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["ctrl_c_held"]


@contextlib.contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Run the block whole: a Ctrl-C is raised before it or after it, never inside it."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, [])  # the mask as it is, to be put back
    came: list[int] = []
    handler = None  # the handler put back at the end, where one was swapped
    try:  # one that came just now is raised by the call that blocks, once it has: put back here
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        before = signal.getsignal(signal.SIGINT)  # callable: set from Python
        if threading.current_thread() is threading.main_thread() and callable(before):
            signal.signal(signal.SIGINT, lambda number, _: came.append(number))
            handler = before  # only the main thread runs handlers, and may set them
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)  # one held on this thread: noted now
        if handler is not None:
            signal.signal(signal.SIGINT, handler)
            if came:  # as the Ctrl-C would have been handled had it come now
                signal.raise_signal(signal.SIGINT)
