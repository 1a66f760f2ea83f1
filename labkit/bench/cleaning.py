"""Removing finished runs from the runs home: `labkit clean` (every one, or all but the newest up
to a size) and the pruning that making a run folder does (the newest finished runs kept up to
200 MB, or `LABKIT_RUNS_KEEP_MB`, at most once in `PRUNE_EVERY` seconds): a workshop day fills
the home fast (a participant's session leaves 100 MB or more).

A run's size is written into its marker as the run ends (`record_size`), so that pruning reads
one line per run rather than walking every file of every run: a home at its 200 MB holds some
800 runs and 70,000 files, a walk of 0.4 s that every server start and every half minute of
clicking would pay. A run whose process died before it could write its size is walked.

Nothing is removed without labkit's marker, `.labkit-run`, nor while its run goes on (the marker
is locked then); a link is never followed, and a folder that could not be removed whole is left
whole and named.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from labkit.bench.errors import check_bool, check_int
from labkit.bench.home import MARKER, runs_home, runs_keep_bytes

__all__ = [
    "BLANK_SIZE_LINE",
    "PRUNE_EVERY",
    "Cleaning",
    "clean_runs",
    "folder_size",
    "marker_of",
    "newest_first",
    "open_marker",
    "prune_runs",
    "record_size",
    "remove_run_dir",
    "run_size",
    "what_blocks_removal",
]

PRUNE_EVERY = 30.0  # seconds: a sweep of hundreds of runs walks the home once, not per run

SIZE_LABEL = b"bytes when its run ended: "  # the marker's first line, the size right-aligned
SIZE_WIDTH = 20  # digits: room for any size, so that the marker's own size never changes
BLANK_SIZE_LINE = SIZE_LABEL + b" " * SIZE_WIDTH + b"\n"  # while the run goes on

_pruned_at: float | None = None  # when this process last pruned the runs home (monotonic)


@dataclass
class Cleaning:
    """What `clean_runs` did in `home`: the run folders it removed (or would) and their size in
    bytes, the newest it kept, and what it left: folders whose run goes on, entries labkit did
    not make, and run folders it may not remove (each as "path (why: where)"). `home_size`:
    bytes in every run folder the home held before."""

    home: Path
    removed: list[str] = field(default_factory=list)
    size: int = 0
    kept: list[str] = field(default_factory=list)
    in_use: list[str] = field(default_factory=list)
    not_ours: list[str] = field(default_factory=list)
    stuck: list[str] = field(default_factory=list)
    home_size: int = 0


def clean_runs(dry_run: bool = False, keep_bytes: int = 0) -> Cleaning:
    """Remove every run folder in `runs_home()` that carries labkit's marker and whose run is
    over, but the newest ones that together take at most `keep_bytes`. It never follows a link
    and leaves everything else (folders given as `out` are the caller's, and live elsewhere);
    another `clean` at the same time is harmless."""
    check_bool("dry_run", dry_run)  # "no" would count as true: a dry run the caller did not want
    check_int("keep_bytes", keep_bytes, 0, 1 << 62)
    home = runs_home()
    done = Cleaning(home)
    room = keep_bytes  # what the newest finished runs may still take; once one does not fit,
    for name in newest_first(home):  # every older one goes too
        folder = home / name
        marker = open_marker(folder)
        if marker is None:
            if os.path.lexists(folder):  # else another clean has just removed it
                done.not_ours.append(name)
            continue
        try:
            size = run_size(folder, marker)
            done.home_size += size
            try:
                fcntl.flock(marker, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                done.in_use.append(name)
                continue
            if os.fstat(marker).st_nlink == 0:  # another clean removed it while we waited
                continue
            if size <= room:
                room -= size
                done.kept.append(name)
                continue
            room = 0
            blocked = what_blocks_removal(folder)
            if blocked:  # left whole, rather than half-removed
                done.stuck.append(f"{folder} ({blocked})")
                continue
            done.size += size
            if not dry_run:
                try:
                    remove_run_dir(folder)
                except OSError as error:  # something no check foresaw: say so, and go on
                    done.stuck.append(f"{folder} ({error.strerror}: {error.filename})")
                    continue
            done.removed.append(name)
        finally:
            os.close(marker)
    return done


def newest_first(home: Path) -> list[str]:
    """The home's entries, the newest run first (by its marker's time: when it was made)."""

    def made_at(name: str) -> float:
        try:
            return os.lstat(home / name / MARKER).st_mtime
        except OSError:
            return 0.0

    return sorted(os.listdir(home), key=made_at, reverse=True)


def prune_runs() -> Cleaning | None:
    """Keep the runs home small: remove the oldest finished runs beyond `runs_keep_bytes()`.
    At most once in PRUNE_EVERY seconds per process; None when it did not look (too soon, or
    pruning is off). A folder it cannot remove is left for `labkit clean` to name."""
    global _pruned_at
    keep = runs_keep_bytes()
    now = time.monotonic()
    if keep == 0 or (_pruned_at is not None and now - _pruned_at < PRUNE_EVERY):
        return None
    _pruned_at = now
    return clean_runs(keep_bytes=keep)


def open_marker(folder: Path) -> int | None:
    """The folder's marker, opened without following a link (neither the folder nor the marker
    may be one); None if there is no such marker, or none this user may read: as far as this
    user can tell, the folder is not labkit's."""
    try:
        return marker_of(folder)
    except OSError:
        return None


def marker_of(folder: Path) -> int | None:
    """The folder's marker, opened as `open_marker` opens it; None if the folder carries none.
    An OSError when that cannot be told: FileNotFoundError if the folder is gone, another
    (EACCES, ELOOP, ...) for a folder or marker that may not be read, or is not a plain file."""
    folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        # O_NONBLOCK: a FIFO planted under the marker's name would block a plain open forever
        marker = os.open(MARKER, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder_fd)
    except FileNotFoundError:
        return None
    finally:
        os.close(folder_fd)
    if not stat.S_ISREG(os.fstat(marker).st_mode):
        os.close(marker)
        raise OSError(errno.EINVAL, "the marker is not a plain file", str(folder / MARKER))
    return marker


def what_blocks_removal(folder: Path) -> str | None:
    """Why the folder cannot be removed whole, as "reason: path", or None. A folder in it that
    we may not list or empty (a `chmod 500` one) would stop the removal half-way; a home we may
    not write, at its very end."""
    closed = parent_closed(folder)
    if closed:
        return f"{closed.strerror}: {closed.filename}"
    unreadable: list[OSError] = []
    for top, _, _ in os.walk(folder, onerror=unreadable.append):
        if not os.access(top, os.R_OK | os.W_OK | os.X_OK):
            return f"{os.strerror(errno.EACCES)}: {top}"
    if unreadable:
        return f"{unreadable[0].strerror}: {unreadable[0].filename}"
    return None


def parent_closed(folder: Path) -> PermissionError | None:
    """The error that taking `folder` out of its parent would end in, if we may not write there
    (a `chmod 500` home): known before anything in it is removed. Found only at the end, it
    left the folder emptied, its marker gone: one labkit did not make, for every later clean."""
    parent = Path(folder).parent
    if os.access(parent, os.W_OK | os.X_OK):
        return None
    return PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(parent))


def folder_size(folder: Path) -> int:
    """Bytes in the folder's files, links not followed; a file that goes while we count (a
    journal a running worker removes) counts as nothing."""
    size = 0
    for top, _, names in os.walk(folder):
        for name in names:
            with contextlib.suppress(FileNotFoundError):
                size += os.lstat(os.path.join(top, name)).st_size
    return size


def record_size(marker: int, folder: Path) -> None:
    """Write the folder's size, as its run ends, over the blanks of the marker's first line."""
    os.pwrite(marker, str(folder_size(folder)).rjust(SIZE_WIDTH).encode(), len(SIZE_LABEL))


def run_size(folder: Path, marker: int) -> int:
    """The size the marker recorded as the run ended; the folder walked now where it holds none
    (a run still going on, or one whose process died)."""
    first = os.pread(marker, len(SIZE_LABEL) + SIZE_WIDTH, 0)
    recorded = first.removeprefix(SIZE_LABEL).strip()
    if first.startswith(SIZE_LABEL) and recorded.isdigit():
        return int(recorded)
    return folder_size(folder)


def remove_run_dir(folder: Path) -> None:
    """Remove a run folder, its marker last: until then another `clean` finds it locked and
    leaves it, rather than taking a half-removed folder for one labkit did not make. Nothing is
    removed from a folder that could not be removed itself."""
    closed = parent_closed(folder)
    if closed:
        raise closed
    for entry in os.scandir(folder):
        if entry.name != MARKER:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
    os.unlink(folder / MARKER)
    os.rmdir(folder)
