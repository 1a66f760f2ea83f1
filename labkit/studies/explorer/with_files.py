"""The files a reader's code reads by a relative path (its prompts, its config), copied into
every run folder before the code runs there: a worker's current folder is its run folder, so
`open("prompts/system.txt")` finds them as it does in the reader's project.

They are part of every state like any other file of the run: unchanged, they compare equal;
changed by the code, the change is judged. The paths are checked where the spec is made (each
there, each with a name of its own, none a name the lab keeps) and kept absolute, so that a
server started elsewhere copies the same files. None may hold the folder the runs are written
in (`check_apart`): a run would copy itself into itself, without end.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from labkit.bench.errors import refusal
from labkit.bench.home import home_path
from labkit.bench.own_names import labs_own_name
from labkit.bench.trace import TRACE_FILE

__all__ = ["check_apart", "check_with_files", "copy_in"]


def check_with_files(paths: object) -> tuple[str, ...]:
    """Files or folders that exist, one or a list of them, as absolute paths; their names
    (what they are called in the run folder) neither the same twice nor one of the lab's, nor
    empty: / has none, and would bring the whole file system into every run."""
    given = [paths] if isinstance(paths, (str, os.PathLike)) else paths
    if not isinstance(given, (list, tuple)) or not all(
        isinstance(p, (str, os.PathLike)) and str(p) and os.path.exists(p) for p in given
    ):
        raise refusal("explore_with_files", value=repr(paths))
    found = tuple(os.path.abspath(p) for p in given)
    names = [os.path.basename(p) for p in found]
    refused_name = any(n in ("", TRACE_FILE) or labs_own_name(n) for n in names)
    if len(set(names)) < len(names) or refused_name:
        raise refusal("explore_with_files", value=repr(paths))
    return found


def check_apart(paths: Iterable[str], out: Path | None) -> None:
    """Refuse a path that is, or holds, the output folder `out` or the runs home: the copy
    would land inside what it copies, and go on until the disk or the path length gives out."""
    for what, folder in (("the output folder", out), ("the runs home", home_path())):
        if folder is None:
            continue
        inside = Path(folder).resolve()
        for path in paths:
            if inside.is_relative_to(Path(path).resolve()):
                raise refusal("explore_with_files_holds", path=path, what=what, folder=folder)


def copy_in(run_dir: str | os.PathLike, paths: Iterable[str]) -> None:
    """Copy each file or folder of `paths` into `run_dir`, under its own name."""
    for path in paths:
        target = os.path.join(run_dir, os.path.basename(path))
        if os.path.isdir(path):
            shutil.copytree(path, target, symlinks=True, dirs_exist_ok=True)
        else:
            shutil.copy2(path, target)
