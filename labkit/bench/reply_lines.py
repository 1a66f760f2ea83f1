"""The trial server's replies, line by line, read so that a Ctrl-C is never kept waiting.

Python runs a signal's handler between two lines of Python. A SIGINT that lands just before a
blocking read begins, or is handled in another thread (on Linux, often the thread that sent it),
leaves the main thread asleep in that read: the Ctrl-C is raised only when the read returns. A
read of the server's stdout returns when the server writes, which for a call with no progress
(a step-mode run waiting for "continue", a server that hangs in its start) can be never.

So the caller waits (`readable`), waking every LOOK_FOR_CTRL_C seconds: each wake runs Python
again, which raises the Ctrl-C that waits. The wait cannot see lines that wait in a stream's
buffer, so the lines are split here, from bytes read straight from the pipe.
Client-side: standard library only.
"""

from __future__ import annotations

import os

from labkit.bench.ctrl_c import ctrl_c_held
from labkit.bench.readable import readable

__all__ = ["LOOK_FOR_CTRL_C", "ReplyLines"]

LOOK_FOR_CTRL_C = 0.1  # seconds between two looks at a Ctrl-C while a line is awaited
CHUNK = 1 << 16  # bytes read at once: a matrix's reply is one line of a few kB


class ReplyLines:
    """The lines of one pipe, each whole; `last` is the last one taken."""

    def __init__(self, pipe: int) -> None:
        self.pipe = pipe
        self.unread = b""  # read from the pipe, not yet a whole line
        self.last = ""

    def next(self) -> str:
        """The next line (with its newline), or "" once the other end is closed (the server has
        exited; a line it left unfinished is no reply). A Ctrl-C meanwhile loses no byte: a
        chunk read is kept, and a line taken is in `last` before the Ctrl-C is raised."""
        while b"\n" not in self.unread:
            if not readable([self.pipe], LOOK_FOR_CTRL_C):
                continue
            with ctrl_c_held():
                chunk = os.read(self.pipe, CHUNK)
                self.unread += chunk
            if not chunk:
                return ""
        with ctrl_c_held():
            line, _, self.unread = self.unread.partition(b"\n")
            self.last = line.decode() + "\n"
        return self.last
