"""A file of the run open for writing, as the reader's code holds it, with a crash point each
time its bytes reach the kernel (`watches.Watches.watch_writes` hands these out).
Worker-side: standard library only.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable, Iterator

__all__ = ["WrittenFile", "mark"]


class WrittenFile:
    """A file of the run open for writing, as the reader's code holds it: after each call
    that may hand its bytes to the kernel (a write that fills the buffer, `flush`, `close`, or
    its being dropped unclosed), a crash point if it did: from then on they survive a kill."""

    def __init__(self, opened: io.IOBase, written: Callable[[], None]) -> None:
        self._opened, self._written = opened, written
        self._mark = self.mark()

    def mark(self) -> tuple[int, int, int]:
        """What changes when bytes reach the file: its size, its time, the kernel's offset."""
        fd = self._opened.fileno()
        return *mark(fd), os.lseek(fd, 0, os.SEEK_CUR)

    def reached(self) -> None:
        if not self._opened.closed and self.mark() != self._mark:
            self._mark = self.mark()
            self._written()

    def write(self, data: object) -> int:
        written = self._opened.write(data)
        self.reached()
        return written

    def writelines(self, lines: Iterable) -> None:
        self._opened.writelines(lines)
        self.reached()

    def flush(self) -> None:
        self._opened.flush()
        self.reached()

    def close(self) -> None:
        if not self._opened.closed:
            self.flush()
        self._opened.close()

    def __del__(self) -> None:
        """Dropped unclosed (`open(path, "w").write(text)`): Python closes the file it holds,
        and that flush is a write that reaches the kernel, so this closes it first."""
        self.close()

    def __enter__(self) -> WrittenFile:
        return self

    def __exit__(self, *error: object) -> None:
        self.close()

    def __iter__(self) -> Iterator:
        return self

    def __next__(self) -> object:
        return next(self._opened)

    def __getattr__(self, name: str) -> object:
        return getattr(self._opened, name)


def mark(fd: int) -> tuple[int, int]:
    """What changes when bytes reach a file: its size and its time of change."""
    status = os.fstat(fd)
    return status.st_size, status.st_mtime_ns
