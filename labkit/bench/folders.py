"""Where runs live: every run gets a new folder, by default under one home in the temp directory.

A run writes only inside its own folder, and leaves it there for the reader to look at. So the
folders pile up over a workshop; keeping them under one home per user (`labkit-runs-<uid>`, see
home.py) lets `labkit clean` remove them all without touching anything else (cleaning.py, which
also prunes the home as runs are made).

Each folder made there carries a marker, `.labkit-run` (`clean` removes nothing without it),
locked while its run goes on (`clean` leaves it alone then). This module makes the folders and
holds them in use; the studies import all three modules' names from here.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from labkit.bench.cleaning import (
    BLANK_SIZE_LINE,
    PRUNE_EVERY,
    Cleaning,
    clean_runs,
    folder_size,
    marker_of,
    newest_first,
    open_marker,
    prune_runs,
    record_size,
    remove_run_dir,
    what_blocks_removal,
)
from labkit.bench.errors import LabError
from labkit.bench.home import (
    KEEP_MB_DEFAULT,
    KEEP_MB_MAX,
    KEEP_MB_VARIABLE,
    MARKER,
    RUN_DIR_MAX,
    cannot_make,
    cannot_make_error,
    check_room,
    check_run_dir,
    runs_home,
    runs_keep_bytes,
    temp_dir,
)

__all__ = [
    "KEEP_MB_DEFAULT",
    "KEEP_MB_MAX",
    "KEEP_MB_VARIABLE",
    "MARKER",
    "PRUNE_EVERY",
    "RUN_DIR_MAX",
    "Cleaning",
    "cannot_make",
    "cannot_make_error",
    "check_room",
    "check_run_dir",
    "clean_runs",
    "folder_size",
    "holds_run_dirs",
    "keep_json",
    "marker_of",
    "new_run_dir",
    "newest_first",
    "open_marker",
    "outlive_call",
    "prune_runs",
    "release_run_dir",
    "remove_run_dir",
    "runs_home",
    "runs_keep_bytes",
    "scratch_run_dir",
    "temp_dir",
    "what_blocks_removal",
]

_in_use: dict[Path, int] = {}  # this process's runs that go on: folder → its locked marker
_scopes = threading.local()  # per thread: the folders each @holds_run_dirs call has made

Function = TypeVar("Function", bound=Callable)


def new_run_dir(out: Path | str | None, prefix: str = "commit-window-", deepest: str = "") -> Path:
    """A run folder that did not exist before: `out` itself, or a new folder in `runs_home()`,
    marked as labkit's and in use until released (see `holds_run_dirs`). `deepest`: the
    longest path to be made in it (a sweep's runs), checked for room first."""
    check_run_dir(out, prefix, deepest)
    if out is not None:
        path = Path(out)
        try:
            path.mkdir()
        except FileExistsError:
            message = f"output folder {path} already exists; name a new one"
            raise LabError(message, "exists", path=str(path)) from None
        except OSError as error:
            raise cannot_make_error("the output folder", path, error) from None
        return path.resolve()
    home = runs_home()
    prune_runs()
    try:
        folder = Path(tempfile.mkdtemp(prefix=prefix, dir=home))
    except OSError as error:
        raise cannot_make_error("a run folder in", home, error) from None
    claim(folder)
    return folder


def claim(folder: Path) -> None:
    """Mark a new folder as labkit's and lock the marker for as long as its run goes on. The
    marker gets its name only once it is locked: `clean` never sees it unlocked too early."""
    draft = folder / f"{MARKER}.new"
    marker = -1
    try:
        marker = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        fcntl.flock(marker, fcntl.LOCK_EX)
        said = f"a labkit run folder; in use while locked (pid {os.getpid()})\n"
        os.write(marker, BLANK_SIZE_LINE + said.encode())
        os.rename(draft, folder / MARKER)
    except OSError as error:
        if marker >= 0:
            os.close(marker)
        shutil.rmtree(folder, ignore_errors=True)
        raise cannot_make_error("a run folder in", folder.parent, error) from None
    _in_use[folder] = marker
    made = getattr(_scopes, "made", None)
    if made:
        made[-1].append(folder)


def release_run_dir(folder: Path) -> None:
    """The run in `folder` is over: `clean` may remove it now. (It is also released when this
    process ends; a folder given as `out` was never locked.)"""
    marker = _in_use.pop(Path(folder), None)
    if marker is not None:
        try:  # without its size, pruning walks the folder instead: nothing else is lost
            with contextlib.suppress(OSError):
                record_size(marker, Path(folder))
        finally:
            os.close(marker)


def keep_json(run_dir: Path, **documents: object) -> None:
    """Leave each document in the run folder as `<name>.json`, indented for a reader's eyes."""
    for name, data in documents.items():
        (Path(run_dir) / f"{name}.json").write_text(json.dumps(data, indent=2))


def outlive_call(folder: Path) -> None:
    """Keep a folder made during a `holds_run_dirs` call in use after the call returns, until
    `release_run_dir`: a server that the lab keeps running across calls (lesson 7's Postgres)."""
    for made in getattr(_scopes, "made", ()):
        if folder in made:
            made.remove(folder)


def holds_run_dirs(function: Function) -> Function:
    """Decorate a function that makes run folders: each one it makes stays in use (`clean`
    leaves it alone) until the function returns or raises."""

    @functools.wraps(function)
    def holding(*args: object, **kwargs: object) -> object:
        stack = _scopes.__dict__.setdefault("made", [])
        stack.append([])
        try:
            return function(*args, **kwargs)
        finally:
            for folder in stack.pop():
                release_run_dir(folder)

    return holding


@contextmanager
def scratch_run_dir(prefix: str) -> Iterator[Path]:
    """A run folder for a moment's work, removed afterwards; one that a killed process leaves
    behind is `clean`'s to remove, like any run folder."""
    folder = new_run_dir(None, prefix)
    try:
        yield folder
    finally:
        remove_run_dir(folder)
        release_run_dir(folder)
