"""A process's buffered output, flushed before it forks (nothing buffered may be written twice,
once by each process) or ends with `os._exit` (which flushes nothing).

The reader's code runs in the same process and may have put something else in `sys.stdout`'s
place: None (`sys.stdout = None` silences `print`), a StringIO, a file it closed since. So both
the streams Python started with and the ones in place now are flushed, each that can be.
Worker-side: standard library only.
"""

from __future__ import annotations

import contextlib
import sys

__all__ = ["flush_output"]


def flush_output() -> None:
    """Flush stdout and stderr: Python's own (`sys.__stdout__`) and whatever stands in their
    place now; a stream the reader's code closed (ValueError) has nothing left to flush."""
    streams = (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__)
    for stream in {id(stream): stream for stream in streams}.values():
        flush = getattr(stream, "flush", None)
        if callable(flush):
            with contextlib.suppress(ValueError, OSError):
                flush()
