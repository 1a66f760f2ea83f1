"""A step like lesson 2's, `step(control, effect, gate)`, in the world of study 000.

Its world is study 000's: `control.db` (progress.done) and `effect.db` (receipts), or one file
for both (lesson 2's atomic order), written through study 000's stores; so this module is the
one place the explorer uses another study's code (as the outbox does). The step's own `gate`
calls are only names here: the explorer finds its crash points itself. Recovery runs the step
again unless done=1, as study 000's recovery does. Worker-side: standard library only.
"""

from __future__ import annotations

from collections.abc import Callable

from labkit.studies.commit_window.stores import KEY, PAYLOAD, Store, create_files
from labkit.studies.explorer.record import CrashPoints
from labkit.studies.explorer.target import load_function

__all__ = ["FILES", "recover", "run_first"]

FILES = {"two": ("control.db", "effect.db"), "one": ("control.db",)}  # job["files"]


def ignore_gate(point: str) -> None:
    """The step's own kill points: the explorer's crash points are found, not named."""


def the_step(job: dict, points: CrashPoints | None = None) -> Callable:
    """The reader's step (an exercise's source finds KEY and PAYLOAD defined, as in lesson 2)."""
    step, file, _ = load_function(job["target"], {"KEY": KEY, "PAYLOAD": PAYLOAD})
    if points is not None:
        code = getattr(step, "__code__", None)
        points.reader_files |= {file, code.co_filename if code else file}
    return step


def stores(job: dict, trace: object) -> tuple[Store, Store]:
    files = FILES[job["files"]]
    control = Store(job["run_dir"], "control.db", trace)
    return control, control if len(files) == 1 else Store(job["run_dir"], "effect.db", trace)


def run_first(job: dict, points: CrashPoints) -> None:
    """Make the step's files, then run it once with a crash point after every commit."""
    create_files(job["run_dir"], FILES[job["files"]], unique_key=False)
    step = the_step(job, points)
    watch = points.watch_commits()
    points.watch_files()
    control, effect = stores(job, points.trace)
    points.arm()
    step(control, effect, ignore_gate)
    watch.observe()  # the point after its last commit


def recover(job: dict, trace: object) -> bool:
    """Run the step again unless done=1; True once done=1."""
    control, effect = stores(job, trace)
    if not control.is_done():
        the_step(job)(control, effect, ignore_gate)
    return control.is_done()
