"""The names the lab gives its own files and folders where a reader's code keeps its state too
(a run folder, an exploration's folder, a service's folder): each begins with `LABS_OWN`. So a
dot-file of the reader's (a `.sent` marker) is their state, never taken for the lab's, and no
file of the lab's is taken for the reader's. A few of the lab's files keep names readers see
in the lessons (its `trace.jsonl`, a worker's `<role>.stdout`): a reader's code that writes one
of those is refused (`LabsOwnFile`), not let corrupt it. Worker-side: standard library only.
"""

from __future__ import annotations

import errno
import os

__all__ = ["LABS_OWN", "LabsOwnFile", "labs_own_name", "refused_as_labs_own"]

LABS_OWN = ".labkit-"


class LabsOwnFile(PermissionError):
    """What a reader's code gets for opening for writing, or removing, a file the lab keeps for
    its own at the top of a run folder (its trace, a worker's output or report): the lab's
    record of the run must stay the lab's, and what the code writes there is no state of theirs.
    Its line in a traceback is recognised by `refused_as_labs_own`."""

    def __init__(self, name: str) -> None:
        super().__init__(errno.EACCES, os.strerror(errno.EACCES), name)


def refused_as_labs_own(error: str) -> bool:
    """Whether a worker's error line (its traceback's last) is a `LabsOwnFile`."""
    return error.startswith(f"{LabsOwnFile.__module__}.{LabsOwnFile.__qualname__}:")


def labs_own_name(name: str) -> bool:
    """Whether a file or folder called `name` (no path) is one the lab made for itself."""
    return name.startswith(LABS_OWN)
