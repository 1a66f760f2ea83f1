"""A crash state's restarts recovered by one worker the explorer starts, forking the others.

Each restart of a crash state (at once, a day later, across a month, a year) is a recovery of
its own: a new process, on its own copy of what the kill left. The explorer used to start a
worker for each, and its every start is a fork of the trial server and a handover, in the one
process that runs the whole exploration: for a small graph most of its time. Now it starts
one (`ALSO` in its job names the other restarts and their folders): as it begins, before it
loads anything of the reader's, that worker copies what the kill left into each other
restart's folder (`AFTER`, in the point's) and forks one child, which waits. As soon as the
reader's code reads a clock that a restart moves (`clock_reads`), the child is told to go
on: it forks a child of its own for each restart after the first, and each goes on as that
restart's recovery in its own folder (its output there, its pid and parent new, its clocks
its own). If the recovery ends without such a read, the others would do what it did (a
restart moves nothing else a fork can tell): its report becomes theirs, marked `same_as`, and
the waiting child ends unused. Each waits for its children before it ends; what each ended
with goes into its folder (`EXIT_FILE`), for the explorer to judge it as it judges a worker
(`exit_status`). A restart that needs a new interpreter (a new hash seed) is started apart,
as before. Worker-side: standard library only.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from labkit.bench.output import flush_output
from labkit.bench.own_names import LABS_OWN

__all__ = [
    "AFTER",
    "ALSO",
    "EXIT_FILE",
    "SAME_AS",
    "copy_crash_state",
    "exit_status",
    "restarts_apart",
    "take_for_the_others",
    "tell",
    "wait_for",
]

AFTER = "after-"  # a copy of a crash state, for the recovery after one more restart
ALSO = "also_restarts"  # a recovery job's other restarts: [{"restart": ..., "run_dir": ...}]
SAME_AS = "same_as"  # a report taken from the recovery at another restart: that restart
SAME = b"same"  # what a child is told when its restart would do what the recovery at once did
EXIT_FILE = LABS_OWN + "recovery-exit"  # a child's exit status, in its folder: no run's state
# bound before any watch of the worker's wraps them (`watches`): the lab's own files
OPEN, WRITE, CLOSE, DUP2 = os.open, os.write, os.close, os.dup2


@dataclass
class Child:
    """A restart's child, in the process that forked it: its pid, its folder, and the pipe it
    is told on (`tell`): -1 once it has been told, or where it is told nothing (a child's
    own children go on at once)."""

    pid: int
    run_dir: str
    pipe: int = -1


def restarts_apart(job: dict) -> tuple[dict | None, list[Child]]:
    """For the job's other restarts (`ALSO`), each given its copy of the crash state: one
    child, which waits until this process has said whether they must recover at all
    (`told`). Told no, it ends (None: this process takes its report for them all,
    `take_for_the_others`); told yes, or never told, it forks one child for each restart
    after its first, goes on as the first, and its children as theirs (still as the kill
    left everything: no code of the reader's has run in it). In this process, its job and
    its children."""
    others = job.get(ALSO) or []
    if not others:
        return job, []
    from labkit.bench.portable import die_with  # ctypes: imported once, not once a child

    for other in others:  # each copy before any recovery changes the folder
        copy_crash_state(job["run_dir"], other["run_dir"])
    said, say = os.pipe()
    parent = os.getpid()
    pid = fork_child()
    if pid:
        CLOSE(said)
        return job, [Child(pid, others[0]["run_dir"], say)]
    die_with(parent)
    CLOSE(say)
    if told(said):
        return None, []
    children, holder = [], os.getpid()
    for other in others[1:]:
        if (pid := fork_child()) == 0:
            die_with(holder)
            return went_on(job, other), []
        children.append(Child(pid, other["run_dir"]))
    return went_on(job, others[0]), children


def fork_child() -> int:
    flush_output()  # nothing buffered may be written twice
    return os.fork()


def went_on(job: dict, other: dict) -> dict:
    """A child's job, as the recovery after `other`'s restart, its output in its folder."""
    mine = {**job, ALSO: [], "restart": other["restart"], "run_dir": other["run_dir"]}
    become(mine)
    return mine


def told(said: int) -> bool:
    """In a child: wait until the recovery at once has ended, and whether it said that this
    restart would do the same (`SAME`); anything else, or its end without a word (it died),
    and this child recovers."""
    word = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(said, 16):
            word += chunk
    CLOSE(said)
    return word == SAME


def tell(children: list[Child], same: bool) -> None:
    """Tell each child not told yet whether its restart would do what this recovery did
    (`told`): as soon as the reader's code reads a moved clock (no), or at its end."""
    for child in children:
        if child.pipe >= 0:
            with contextlib.suppress(OSError):
                WRITE(child.pipe, SAME if same else b"go")
            CLOSE(child.pipe)
            child.pipe = -1


def take_for_the_others(job: dict) -> None:
    """The job's other restarts would do what its recovery did (its code read no moved clock:
    `clock_reads`): its report, marked `same_as`, as each of theirs, each ended as 0 (the
    first's end is its child's, kept by `wait_for`)."""
    import json

    with open(os.path.join(job["run_dir"], "recovery.json")) as kept:
        said = {**json.load(kept), SAME_AS: job["restart"]}
    for n, other in enumerate(job[ALSO]):
        with open(os.path.join(other["run_dir"], "recovery.json"), "w") as out:
            out.write(json.dumps(said))
        if n:
            keep_exit(other["run_dir"], 0)


def copy_crash_state(run_dir: str, copy: str) -> None:
    """What the kill left in `run_dir` (not the other restarts' copies in it), into `copy`."""
    import shutil

    shutil.copytree(
        run_dir,
        copy,
        ignore=lambda _, names: [n for n in names if n.startswith(AFTER)],
        dirs_exist_ok=True,
    )


def become(job: dict) -> None:
    """In a child (killed with its worker, as by a timeout's SIGKILL): output to its own
    folder, as a worker's goes to its run folder, and its folder as its current one."""
    for fd, stream in ((1, "stdout"), (2, "stderr")):
        path = os.path.join(job["run_dir"], f"{job['role']}.{stream}")
        output = OPEN(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        DUP2(output, fd)
        CLOSE(output)
    os.chdir(job["run_dir"])


def wait_for(children: list[Child]) -> None:
    """Wait for every child; each one's exit status (a signal's as its negative number) goes
    into its folder's `EXIT_FILE`."""
    for child in children:
        while True:
            try:
                _, status = os.waitpid(child.pid, 0)
                break
            except InterruptedError:
                continue
        keep_exit(child.run_dir, os.waitstatus_to_exitcode(status))


def keep_exit(run_dir: str, code: int) -> None:
    """A child's exit status, into its folder's `EXIT_FILE`."""
    with contextlib.suppress(OSError):
        kept = OPEN(os.path.join(run_dir, EXIT_FILE), os.O_WRONLY | os.O_CREAT, 0o644)
        WRITE(kept, str(code).encode())
        CLOSE(kept)


def exit_status(run_dir: str) -> int | None:
    """A child's exit status, as its worker kept it; None if it has none (the worker died)."""
    try:
        with open(os.path.join(run_dir, EXIT_FILE)) as kept:
            return int(kept.read())
    except (OSError, ValueError):
        return None
