"""A rename into the run folder as a crash point: the "write a temporary file, then
`os.replace` it over the real one" recipe (atomic saves of JSON, of configs) makes the new
contents visible at the rename, not at the temporary file's write. `os.replace` and
`os.rename` (which `pathlib.Path.replace`, `Path.rename` and `shutil.move` call) are watched:
after each that lands on a file of the run folder, a crash point at the reader's line, as a
write of that file. Worker-side: standard library only.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from labkit.studies.explorer.record import CrashPoints

__all__ = ["watch_renames"]


def watch_renames(points: CrashPoints) -> None:
    """In this process, a crash point after every rename whose target is in the run folder;
    a target outside it is noted, as a file opened for writing there is."""
    real_dir = os.path.realpath(points.run_dir)

    def watched(rename: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(rename)
        def renamed(src: object, dst: object, *args: object, **kwargs: object) -> None:
            if kwargs.get("dst_dir_fd") is None:
                points.refuse_labs_own(dst)
            rename(src, dst, *args, **kwargs)
            if points.quiet or kwargs.get("dst_dir_fd") is not None:
                return
            target = os.path.realpath(os.fsdecode(dst))
            if points.inside(target):
                points.hit("write", os.path.relpath(target, real_dir))
            else:
                points.note_outside(target)

        return renamed

    os.replace, os.rename = watched(os.replace), watched(os.rename)
