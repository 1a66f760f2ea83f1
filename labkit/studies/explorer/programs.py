"""A program the reader's code starts as a write outside the run folder: a node that runs
`curl -X POST` or `sendmail` makes its effect where no crash state of the run holds it and no
replay can take it back, and the explorer sees nothing of what another program does beyond
the run folder's files. So each program started from Python (`subprocess`: Popen, run, call,
check_output, asyncio's; `os.system`; `os.posix_spawn`; `os.spawn*`; `os.exec*`) is noted as
"outside" by its name (`program:curl`; a command line's program is the shell, `sh`): the
exploration fails rather than start it again at every crash point and then say green, and
says so in words of its own. The reader may declare a program harmless, one that reaches
nothing outside the run folder (`harmless_programs`); a program the lab starts is the lab's.
Worker-side: standard library only, and not `subprocess` (a step's fresh worker never loads it).
"""

from __future__ import annotations

import _posixsubprocess
import functools
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from labkit.studies.explorer.report import PROGRAM

if TYPE_CHECKING:
    from labkit.studies.explorer.record import CrashPoints

__all__ = ["watch_programs"]

PYTHONS_OWN = os.path.join(os.path.realpath(os.path.dirname(os.__file__)), "")  # subprocess, os
LABKIT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
LABS_OWN = os.path.join(LABKIT, "")


def watch_programs(points: CrashPoints) -> None:
    """In this process, each program started from Python is noted as a write outside the run
    folder, but one the job declares harmless (`harmless_programs`) or the lab started."""
    harmless = frozenset(points.job.get("harmless_programs", ()))

    def watched(start: Callable, program: Callable[..., object]) -> Callable:
        @functools.wraps(start)
        def starting(*args: object, **kwargs: object) -> object:
            name = program_name(program(*args, **kwargs))
            if name and name not in harmless and not started_by_the_lab(sys._getframe(1)):
                points.note_outside(f"{PROGRAM}{name}")
            return start(*args, **kwargs)

        return starting

    watch_subprocess(watched(_posixsubprocess.fork_exec, first_path))
    for name, program in OS_STARTS.items():
        if hasattr(os, name):  # posix_spawn: not everywhere
            setattr(os, name, watched(getattr(os, name), program))


def watch_subprocess(fork_exec: Callable) -> None:
    """`subprocess` starts a program by `_posixsubprocess.fork_exec` (or `os.posix_spawn`),
    given the paths it may be at, the shell's for shell=True: `fork_exec` in its place, in
    `subprocess` too if it is loaded already (it keeps its own name for it, `_fork_exec`)."""
    _posixsubprocess.fork_exec = fork_exec
    if "subprocess" in sys.modules:
        sys.modules["subprocess"]._fork_exec = fork_exec


def first_path(args: object, paths: tuple, *more: object) -> object:
    """`fork_exec`'s program: the first of the paths it may be at (PATH's, for a bare name)."""
    return paths[0] if paths else None


def the_shell(*args: object, **kwargs: object) -> str:
    return "/bin/sh"  # os.system's program: a command line's shell


def given_first(program: object, *args: object, **kwargs: object) -> object:
    return program  # execv(path, args), posix_spawn(path, argv, env)


def given_second(mode: object, program: object, *args: object, **kwargs: object) -> object:
    return program  # spawnv(mode, file, args)


# the os functions that start a program, and where each is given it
EXECS = ("execv", "execve", "execl", "execle", "execlp", "execlpe", "execvp", "execvpe")
SPAWNS = ("spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe")
OS_STARTS = {
    "system": the_shell,
    **dict.fromkeys((*EXECS, "posix_spawn", "posix_spawnp"), given_first),
    **dict.fromkeys(SPAWNS, given_second),
}


def program_name(program: object) -> str | None:
    """A program by its name ("curl" for /usr/bin/curl), or None if `program` is no path (the
    call itself refuses it)."""
    if not isinstance(program, (str, bytes, os.PathLike)):
        return None
    try:
        return os.path.basename(os.fsdecode(program))
    except TypeError:  # a PathLike that gives neither str nor bytes
        return None


def started_by_the_lab(frame: object) -> bool:
    """Whether the code that asked for the program is the lab's: the innermost frame on the
    stack that is neither this watch nor Python's own (subprocess, os, asyncio) is labkit's."""
    while frame is not None:
        file = frame.f_code.co_filename
        if file != __file__ and not pythons_own(file):
            return labs_own(file)
        frame = frame.f_back
    return False


@functools.cache
def pythons_own(file: str) -> bool:
    """A module of Python's standard library (a frozen one: `<frozen os>`), not of a package
    installed beside it."""
    if file.startswith("<frozen "):
        return True
    path = os.path.realpath(file)
    return path.startswith(PYTHONS_OWN) and "-packages" + os.sep not in path


@functools.cache
def labs_own(file: str) -> bool:
    return os.path.realpath(file).startswith(LABS_OWN)
