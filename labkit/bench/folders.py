"""Where runs live: every run gets a new folder, by default under one home in the temp directory.

A run writes only inside its own folder, and leaves it there for the reader to look at. So the
folders pile up over a workshop; keeping them under one home per user (`labkit-runs-<uid>`)
lets `labkit clean` remove them all without touching anything else.

A workshop day fills the home fast (a participant's session leaves 100 MB or more), so making a
run folder there also prunes it: the newest finished runs are kept up to a size (200 MB, or
`LABKIT_RUNS_KEEP_MB`), older ones go, at most once in `PRUNE_EVERY` seconds.

The temp directory is shared (/tmp), so the home is used only if it is a real folder of the
caller's that no one else can write to: anyone else's folder, or a link, could lead the runs,
and `clean`, somewhere else. Each folder made there carries a marker, `.labkit-run` (`clean`
removes nothing without it), locked while its run goes on (`clean` leaves it alone then).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import json
import os
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from labkit.bench.errors import LabError, check_bool, check_instance, check_int

__all__ = [
    "MARKER",
    "Cleaning",
    "check_run_dir",
    "clean_runs",
    "holds_run_dirs",
    "outlive_call",
    "keep_json",
    "new_run_dir",
    "prune_runs",
    "release_run_dir",
    "runs_home",
    "runs_keep_bytes",
    "scratch_run_dir",
    "temp_dir",
]

MARKER = ".labkit-run"
SQLITE_PATH_MAX = 503  # SQLite opens no file whose path, with "-journal" added, tops 512 bytes
DEEPEST_BELOW_RUN = 100  # room under a run folder: <trial>/at-kill/checkpoints.db-journal
RUN_DIR_MAX = SQLITE_PATH_MAX - DEEPEST_BELOW_RUN
KEEP_MB_VARIABLE = "LABKIT_RUNS_KEEP_MB"
KEEP_MB_DEFAULT = 200
KEEP_MB_MAX = 1_000_000_000  # a petabyte: more is a typo, and would overflow keep_bytes
PRUNE_EVERY = 30.0  # seconds: a sweep of hundreds of runs walks the home once, not per run

_in_use: dict[Path, int] = {}  # this process's runs that go on: folder → its locked marker
_scopes = threading.local()  # per thread: the folders each @holds_run_dirs call has made
_pruned_at: float | None = None  # when this process last pruned the runs home (monotonic)

Function = TypeVar("Function", bound=Callable)


def temp_dir() -> Path:
    """$TMPDIR, else tempfile's choice, else /tmp. Python's tempfile quietly falls back to the
    shared /tmp when $TMPDIR is unusable; here that is an error that names it."""
    chosen = os.environ.get("TMPDIR")
    what = "TMPDIR" if chosen else "the temp directory"
    path = Path(chosen or tempfile.tempdir or "/tmp").absolute()
    try:
        is_folder = stat.S_ISDIR(os.stat(path).st_mode)
    except OSError as error:
        raise LabError(
            f"{what} {path}: {error.strerror}; set TMPDIR to a folder of yours"
        ) from None
    if not is_folder:
        raise LabError(f"{what} {path} is not a folder; set TMPDIR to a folder of yours")
    return path


def runs_home(room_for: str = "") -> Path:
    """The folder that holds every run made without an explicit `out`: made (mode 0700) if
    missing, and used only if it is a real folder of the caller's that others cannot write.
    `room_for` names a folder about to be made in it: refused first if it would be too deep."""
    check_instance("room_for", room_for, str, "the name of a folder to be made there (a str)")
    home = temp_dir() / f"labkit-runs-{os.getuid()}"
    if room_for:
        check_room(home / room_for, f"the temp directory {home.parent}")
    try:
        os.mkdir(home, 0o700)
    except FileExistsError:
        pass
    except OSError as error:
        raise LabError(cannot_make("the runs home", home, error)) from None
    info = os.lstat(home)
    yours = info.st_uid == os.getuid()
    problem = (
        "is a symbolic link"
        if stat.S_ISLNK(info.st_mode)
        else "is not a folder"
        if not stat.S_ISDIR(info.st_mode)
        else f"belongs to user {info.st_uid}, not to you"
        if not yours
        else f"can be written by others (mode {stat.S_IMODE(info.st_mode):o})"
        if info.st_mode & 0o022
        else None
    )
    if problem:  # another user's entry in a shared (sticky) /tmp is not the reader's to remove
        remedy = "set TMPDIR to a folder of yours"
        raise LabError(
            f"labkit will not use the runs home {home}: it {problem}; "
            + (f"remove it, or {remedy}" if yours else remedy)
        )
    return home


def cannot_make(what: str, path: Path, error: OSError) -> str:
    """One line for a folder that could not be made: which one, and why, in the system's words."""
    reason = error.strerror or str(error)
    if error.errno == errno.ENOTDIR:
        file = next((p for p in reversed(path.parents) if p.exists() and not p.is_dir()), None)
        reason += f" ({file} is a file)" if file else ""
    return f"cannot make {what} {path}: {reason}"


def check_room(folder: Path, what: str) -> None:
    """Refuse, before anything is made, a run folder too deep for SQLite to open its files."""
    if len(str(folder)) > RUN_DIR_MAX:
        raise LabError(
            f"{what} is too long for SQLite: a run folder there has {len(str(folder))} "
            f"characters, and at most {RUN_DIR_MAX} leave room for its files"
        )


def check_run_dir(out: Path | str | None, prefix: str, deepest: str = "") -> None:
    """Refuse, before anything is made, a run folder that `new_run_dir` could not make, or one
    too deep for SQLite to open the files of `deepest`, the longest folder to be made in it."""
    if out is None:
        runs_keep_bytes()  # a bad LABKIT_RUNS_KEEP_MB: one line before anything is made
        runs_home(room_for=os.path.join(f"{prefix}{'x' * 8}", deepest))  # mkdtemp adds 8
        return
    path = Path(out)
    check_room(path.resolve() / deepest, f"the output folder {path}")
    if os.path.lexists(path):
        raise LabError(
            f"output folder {path} already exists; name a new one", "exists", path=str(path)
        )
    parent = next(p for p in path.absolute().parents if os.path.lexists(p))  # "/" always is
    problem = (
        errno.ENOTDIR
        if not parent.is_dir()
        else errno.EACCES
        if not os.access(parent, os.W_OK | os.X_OK)
        else None
    )
    if problem:
        error = OSError(problem, os.strerror(problem))
        raise LabError(cannot_make("the output folder", path, error))


def new_run_dir(out: Path | str | None, prefix: str = "commit-window-", deepest: str = "") -> Path:
    """A run folder that did not exist before: `out` itself, or a new folder in `runs_home()`,
    marked as labkit's and in use until released (see `holds_run_dirs`). `deepest`: the
    longest path to be made in it (a sweep's runs), checked for room first."""
    check_run_dir(out, prefix, deepest)
    if out is not None:
        path = Path(out)
        try:
            path.mkdir(parents=True)
        except FileExistsError:
            message = f"output folder {path} already exists; name a new one"
            raise LabError(message, "exists", path=str(path)) from None
        except OSError as error:
            raise LabError(cannot_make("the output folder", path, error)) from None
        return path.resolve()
    home = runs_home()
    prune_runs()
    try:
        folder = Path(tempfile.mkdtemp(prefix=prefix, dir=home))
    except OSError as error:
        raise LabError(cannot_make("a run folder in", home, error)) from None
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
        os.write(marker, f"a labkit run folder; in use while locked (pid {os.getpid()})\n".encode())
        os.rename(draft, folder / MARKER)
    except OSError as error:
        if marker >= 0:
            os.close(marker)
        shutil.rmtree(folder, ignore_errors=True)
        raise LabError(cannot_make("a run folder in", folder.parent, error)) from None
    _in_use[folder] = marker
    made = getattr(_scopes, "made", None)
    if made:
        made[-1].append(folder)


def release_run_dir(folder: Path) -> None:
    """The run in `folder` is over: `clean` may remove it now. (It is also released when this
    process ends; a folder given as `out` was never locked.)"""
    marker = _in_use.pop(Path(folder), None)
    if marker is not None:
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
            size = folder_size(folder)
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


def runs_keep_bytes() -> int:
    """How much the newest finished runs may take before older ones are pruned: 200 MB unless
    LABKIT_RUNS_KEEP_MB says otherwise (0 turns pruning off)."""
    text = os.environ.get(KEEP_MB_VARIABLE, str(KEEP_MB_DEFAULT)).strip()
    digits = text.isascii() and text.isdigit() and len(text) < 20  # int() refuses 4,301 digits
    if not (digits and int(text) <= KEEP_MB_MAX):
        raise LabError(
            f"{KEEP_MB_VARIABLE}={text!r}: give a whole number of megabytes from 0 to "
            f"{KEEP_MB_MAX} (default {KEEP_MB_DEFAULT}; 0 keeps every run)"
        )
    return int(text) * 1_000_000


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
    we may not list or empty (a `chmod 500` one) would stop the removal half-way."""
    unreadable: list[OSError] = []
    for top, _, _ in os.walk(folder, onerror=unreadable.append):
        if not os.access(top, os.R_OK | os.W_OK | os.X_OK):
            return f"{os.strerror(errno.EACCES)}: {top}"
    if unreadable:
        return f"{unreadable[0].strerror}: {unreadable[0].filename}"
    return None


def folder_size(folder: Path) -> int:
    """Bytes in the folder's files, links not followed; a file that goes while we count (a
    journal a running worker removes) counts as nothing."""
    size = 0
    for top, _, names in os.walk(folder):
        for name in names:
            with contextlib.suppress(FileNotFoundError):
                size += os.lstat(os.path.join(top, name)).st_size
    return size


def remove_run_dir(folder: Path) -> None:
    """Remove a run folder, its marker last: until then another `clean` finds it locked and
    leaves it, rather than taking a half-removed folder for one labkit did not make."""
    for entry in os.scandir(folder):
        if entry.name != MARKER:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
    os.unlink(folder / MARKER)
    os.rmdir(folder)
