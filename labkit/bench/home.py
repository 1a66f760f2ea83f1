"""The runs home: one folder per user in the temp directory (`labkit-runs-<uid>`) that holds every
run made without an explicit `out`, so that `labkit clean` can remove them all and nothing else.

The temp directory is shared (/tmp), so the home is used only if it is a real folder of the
caller's that no one else can write to: anyone else's folder, or a link, could lead the runs,
and `clean`, somewhere else. A folder is refused before anything is made when SQLite could not
open the files of a run in it (too deep), and so is a bad size for the home to keep.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from labkit.bench.errors import LabError, check_instance, refusal
from labkit.bench.own_names import LABS_OWN

__all__ = [
    "KEEP_MB_DEFAULT",
    "KEEP_MB_MAX",
    "KEEP_MB_VARIABLE",
    "MARKER",
    "RUN_DIR_MAX",
    "cannot_make",
    "cannot_make_error",
    "check_room",
    "check_run_dir",
    "home_path",
    "runs_home",
    "runs_keep_bytes",
    "temp_dir",
]

MARKER = LABS_OWN + "run"
SQLITE_PATH_MAX = 503  # SQLite opens no file whose path, with "-journal" added, tops 512 bytes
DEEPEST_BELOW_RUN = 100  # room under a run folder: <trial>/at-kill/checkpoints.db-journal
RUN_DIR_MAX = SQLITE_PATH_MAX - DEEPEST_BELOW_RUN
KEEP_MB_VARIABLE = "LABKIT_RUNS_KEEP_MB"
KEEP_MB_DEFAULT = 200
KEEP_MB_MAX = 1_000_000_000  # a petabyte: more is a typo, and would overflow keep_bytes


def temp_dir() -> Path:
    """$TMPDIR, else tempfile's choice, else /tmp. Python's tempfile quietly falls back to the
    shared /tmp when $TMPDIR is unusable; here that is an error that names it."""
    chosen = os.environ.get("TMPDIR")
    what = "TMPDIR" if chosen else "the temp directory"
    path = Path(chosen or tempfile.tempdir or "/tmp").absolute()
    try:
        is_folder = stat.S_ISDIR(os.stat(path).st_mode)
    except OSError as error:
        message = f"{what} {path}: {error.strerror}; set TMPDIR to a folder of yours"
        fields = {"what": what, "path": str(path), "reason": error.strerror}
        raise LabError(message, "temp_unusable", **fields) from None
    if not is_folder:
        message = f"{what} {path} is not a folder; set TMPDIR to a folder of yours"
        raise LabError(message, "temp_not_folder", what=what, path=str(path))
    return path


def home_path() -> Path:
    """Where the runs home is, made or not: a check may name it without making it."""
    return temp_dir() / f"labkit-runs-{os.getuid()}"


def runs_home(room_for: str = "") -> Path:
    """The folder that holds every run made without an explicit `out`: made (mode 0700) if
    missing, and used only if it is a real folder of the caller's that others cannot write.
    `room_for` names a folder about to be made in it: refused first if it would be too deep."""
    check_instance("room_for", room_for, str, "folder_name")
    home = home_path()
    if room_for:
        check_room(home / room_for, "the temp directory", home.parent)
    try:
        os.mkdir(home, 0o700)
    except FileExistsError:
        pass
    except OSError as error:
        raise cannot_make_error("the runs home", home, error) from None
    info = os.lstat(home)
    yours = info.st_uid == os.getuid()
    mode = f"{stat.S_IMODE(info.st_mode):o}"
    problem = (
        "link"
        if stat.S_ISLNK(info.st_mode)
        else "not_folder"
        if not stat.S_ISDIR(info.st_mode)
        else "not_yours"
        if not yours
        else "writable"
        if info.st_mode & 0o022
        else None
    )
    if problem:  # another user's entry in a shared (sticky) /tmp is not the reader's to remove
        remedy = "set TMPDIR to a folder of yours"
        said = {
            "link": "is a symbolic link",
            "not_folder": "is not a folder",
            "not_yours": f"belongs to user {info.st_uid}, not to you",
            "writable": f"can be written by others (mode {mode})",
        }[problem]
        code = {  # another user's entry: only TMPDIR is the remedy
            "link": "home_link" if yours else "home_link_theirs",
            "not_folder": "home_not_folder" if yours else "home_not_folder_theirs",
            "not_yours": "home_not_yours",
            "writable": "home_writable",
        }[problem]
        raise LabError(
            f"labkit will not use the runs home {home}: it {said}; "
            + (f"remove it, or {remedy}" if yours else remedy),
            code,
            home=str(home),
            owner=info.st_uid,
            mode=mode,
        )
    return home


def cannot_make(what: str, path: Path, error: OSError) -> str:
    """One line for a folder that could not be made: which one, and why, in the system's words."""
    return f"cannot make {what} {path}: {why_not_made(path, error)}"


def why_not_made(path: Path, error: OSError) -> str:
    """Why a folder could not be made, in the system's words (and the file in its way)."""
    reason = error.strerror or str(error)
    if error.errno == errno.ENOTDIR:
        file = next((p for p in reversed(path.parents) if p.exists() and not p.is_dir()), None)
        reason += f" ({file} is a file)" if file else ""
    return reason


def cannot_make_error(what: str, path: Path, error: OSError) -> LabError:
    """`cannot_make`'s line as a LabError with a code, so that the command line says it in the
    reader's language: `what` is a noun of the catalogue's ("the runs home", "the output
    folder"), or "a run folder in" the folder it was to be made in."""
    code = "cannot_make_in" if what == "a run folder in" else "cannot_make"
    fields = {"what": what, "path": str(path), "reason": why_not_made(path, error)}
    return LabError(cannot_make(what, path, error), code, **fields)


def check_room(folder: Path, what: str, where: Path) -> None:
    """Refuse, before anything is made, a run folder too deep for SQLite to open its files
    (`what` folder `where`: "the temp directory" /tmp, "the output folder" out)."""
    if len(str(folder)) > RUN_DIR_MAX:
        length = len(str(folder))
        raise LabError(
            f"{what} {where} is too long for SQLite: a run folder there has {length} "
            f"characters, and at most {RUN_DIR_MAX} leave room for its files",
            "too_long",
            what=what,
            path=str(where),
            length=length,
            most=RUN_DIR_MAX,
        )


def check_run_dir(out: Path | str | None, prefix: str, deepest: str = "") -> None:
    """Refuse, before anything is made, a run folder that `new_run_dir` could not make (its
    parent missing: a typo in it would otherwise make a tree of folders where none was meant),
    or one too deep for SQLite to open the files of `deepest`, the longest folder in it."""
    if out is None:
        runs_keep_bytes()  # a bad LABKIT_RUNS_KEEP_MB: one line before anything is made
        runs_home(room_for=os.path.join(f"{prefix}{'x' * 8}", deepest))  # mkdtemp adds 8
        return
    path = Path(out)
    check_room(path.resolve() / deepest, "the output folder", path)
    if os.path.lexists(path):
        raise LabError(
            f"output folder {path} already exists; name a new one", "exists", path=str(path)
        )
    parent = next(p for p in path.absolute().parents if os.path.lexists(p))  # "/" always is
    if parent.is_dir() and parent != path.absolute().parent:  # only the last folder is made
        where = str(path.absolute().parent)
        raise refusal("parent_missing", what="the output folder", path=str(path), parent=where)
    problem = (
        errno.ENOTDIR
        if not parent.is_dir()
        else errno.EACCES
        if not os.access(parent, os.W_OK | os.X_OK)
        else None
    )
    if problem:
        error = OSError(problem, os.strerror(problem))
        raise cannot_make_error("the output folder", path, error)


def runs_keep_bytes() -> int:
    """How much the newest finished runs may take before older ones are pruned: 200 MB unless
    LABKIT_RUNS_KEEP_MB says otherwise (0 turns pruning off)."""
    text = os.environ.get(KEEP_MB_VARIABLE, str(KEEP_MB_DEFAULT)).strip()
    digits = text.isascii() and text.isdigit() and len(text) < 20  # int() refuses 4,301 digits
    if not (digits and int(text) <= KEEP_MB_MAX):
        raise LabError(
            f"{KEEP_MB_VARIABLE}={text!r}: give a whole number of megabytes from 0 to "
            f"{KEEP_MB_MAX} (default {KEEP_MB_DEFAULT}; 0 keeps every run)",
            "keep_mb",
            variable=KEEP_MB_VARIABLE,
            value=text,
            most=KEEP_MB_MAX,
            default=KEEP_MB_DEFAULT,
        )
    return int(text) * 1_000_000
