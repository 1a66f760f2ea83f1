"""The worker process: one workflow step that commits a receipt and a checkpoint.

Started by `labkit.bench.launcher` (entry `labkit.studies.commit_window.worker:run_step`). It
imports only the standard library and labkit's worker-side modules, so it starts almost as
fast as a bare interpreter.
At each kill point it calls the gate, which may end the process there (`os._exit(91)`, no
cleanup at all, as study 000 does) or stop and ask the parent what to do (the parent may
answer "continue" or SIGKILL it).
"""

from __future__ import annotations

import sys
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


def run_learner_step(
    job: dict, control: Store, effect: Store, gate: Gate, watch: CommitWatch
) -> None:
    """Run a reader's step; a `sys.exit()` in it is their error, shown at their line, not the
    end of a step that did its work."""
    step = learner_step(job["step_source"], job["step_name"])
    try:
        step(control, effect, gate)
    except SystemExit:
        import traceback

        traceback.print_exc()  # its last line and the reader's frame, as for any other error
        sys.exit(1)
    watch.observe()  # the point after the step's last commit


def start_learner(job: dict, gate: Gate, trace: Trace) -> CommitWatch:
    """Before a reader's step opens anything: a kill point after every commit it will make, to
    either file, however it writes it (`CommitWatch`), so no commit window can hide from the
    judge (the built-in steps name their points themselves)."""
    watch = CommitWatch(job["run_dir"], job["files"], gate.after_commit, trace)
    watch.watch_process()
    return watch


def run_step(job: dict) -> None:
    """Do the step once, unless the checkpoint says it is already done."""
    learner = "step_source" in job
    if learner and job["role"] == "recovery":  # a reader's retry, as after a real restart
        from labkit.bench.restart import LATER, restart_here  # (only a retry pays for it)

        restart_here(LATER)
    run_dir, files = job["run_dir"], job["files"]
    trace = Trace(run_dir, job["role"])
    trace.event("start", order=job["order"])
    gate = Gate(trace, job)
    watch = start_learner(job, gate, trace) if learner else None
    control = Store(run_dir, "control.db", trace)
    effect = control if files == ["control.db"] else Store(run_dir, "effect.db", trace)
    if control.is_done():
        trace.event("skip", reason="done=1: the checkpoint says the step already ran")
        print("checkpoint says done=1: skipping the step")
    else:
        gate("start")
        if learner:
            run_learner_step(job, control, effect, gate, watch)
        else:
            STEPS[job["order"]](control, effect, gate)
    trace.event("exit", code=0)
