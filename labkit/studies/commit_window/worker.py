"""The worker process: one workflow step that commits a receipt and a checkpoint.

Started by `labkit.bench.launcher` (entry `labkit.studies.commit_window.worker:run_step`). It
imports only the standard library and labkit's worker-side modules, so it starts almost as
fast as a bare interpreter.
At each kill point it calls the gate, which may end the process there (`os._exit(91)`, no
cleanup at all, as study 000 does) or stop and ask the parent what to do (the parent may
answer "continue" or SIGKILL it).
"""

from __future__ import annotations

from collections.abc import Callable

from labkit.bench.gate import Gate
from labkit.bench.trace import Trace
from labkit.studies.commit_window.stores import KEY, PAYLOAD, CommitWatch, Store

__all__ = ["LEARNER_FILE", "STEPS", "run_step"]

LEARNER_FILE = "<your step>"  # a reader's step's file name in a traceback (the judge finds it)


def effect_first(control: Store, effect: Store, gate: Gate) -> None:
    with effect:
        effect.add_receipt(KEY, PAYLOAD)
    gate("effect")
    with control:
        control.mark_done()
    gate("checkpoint")


def checkpoint_first(control: Store, effect: Store, gate: Gate) -> None:
    with control:
        control.mark_done()
    gate("checkpoint")
    with effect:
        effect.add_receipt(KEY, PAYLOAD)
    gate("effect")


def atomic(control: Store, effect: Store, gate: Gate) -> None:
    # `effect` is `control` here: one file, so one transaction can hold both writes.
    with control:
        control.add_receipt(KEY, PAYLOAD)
        control.mark_done()
        gate("in_transaction")
    gate("committed")


def idempotent(control: Store, effect: Store, gate: Gate) -> None:
    with effect:
        effect.add_receipt_once(KEY, PAYLOAD)  # a retry gets the original receipt back
    gate("effect")
    with control:
        control.mark_done()
    gate("checkpoint")


Step = Callable[[Store, Store, Gate], None]
STEPS = {
    "effect_first": effect_first,
    "checkpoint_first": checkpoint_first,
    "atomic": atomic,
    "idempotent": idempotent,
}


def learner_step(source: str, name: str) -> Step:
    """A step written by a reader (an exercise): its source, run here like the built-in ones."""
    namespace = {"KEY": KEY, "PAYLOAD": PAYLOAD}
    exec(compile(source, LEARNER_FILE, "exec"), namespace)  # the reader's code, in their own lab
    return namespace[name]


def run_learner_step(job: dict, control: Store, effect: Store, gate: Gate) -> None:
    """A reader's step gets a kill point after every commit it makes, however it wrote it, so no
    commit window can hide from the judge (the built-in steps name their points themselves)."""
    step = learner_step(job["step_source"], job["step_name"])
    watch = CommitWatch((control, effect), gate.after_commit)
    step(control, effect, gate)
    watch.settle()  # the point after the step's last commit


def run_step(job: dict) -> None:
    """Do the step once, unless the checkpoint says it is already done."""
    run_dir, files = job["run_dir"], job["files"]
    trace = Trace(run_dir, job["role"])
    trace.event("start", order=job["order"])
    gate = Gate(trace, job)
    control = Store(run_dir, "control.db", trace)
    effect = control if files == ["control.db"] else Store(run_dir, "effect.db", trace)
    if control.is_done():
        trace.event("skip", reason="done=1: the checkpoint says the step already ran")
        print("checkpoint says done=1: skipping the step")
    else:
        gate("start")
        if "step_source" in job:
            run_learner_step(job, control, effect, gate)
        else:
            STEPS[job["order"]](control, effect, gate)
    trace.event("exit", code=0)
