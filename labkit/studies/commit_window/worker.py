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
from labkit.studies.commit_window.stores import KEY, PAYLOAD, Store

__all__ = ["STEPS", "run_step"]


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


Step = Callable[[Store, Store, Gate], None]  # what a step is: the built-in ones, or a reader's
STEPS: dict[str, Step] = {
    "effect_first": effect_first,
    "checkpoint_first": checkpoint_first,
    "atomic": atomic,
    "idempotent": idempotent,
}


def run_step(job: dict) -> None:
    """Do the step once, unless the checkpoint says it is already done."""
    reader = "step_source" in job  # an exercise: the reader's own step (`learner`)
    if reader:
        from labkit.studies.commit_window import learner  # only a reader's worker pays for it

        learner.restart_if_retry(job)
    run_dir, files = job["run_dir"], job["files"]
    trace = Trace(run_dir, job["role"])
    trace.event("start", order=job["order"])
    gate = Gate(trace, job)
    watch = learner.watch(job, gate, trace) if reader else None
    control = Store(run_dir, "control.db", trace)
    effect = control if files == ["control.db"] else Store(run_dir, "effect.db", trace)
    if control.is_done():
        trace.event("skip", reason="done=1: the checkpoint says the step already ran")
        print("checkpoint says done=1: skipping the step")
    else:
        gate("start")
        if reader:
            learner.run(job, control, effect, gate, watch)
        else:
            STEPS[job["order"]](control, effect, gate)
    trace.event("exit", code=0)
