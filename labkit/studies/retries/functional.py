"""Lesson 8, the functional API: on resume the `@entrypoint` runs again from its top, and each
`@task` that finished returns its saved result instead of running.

The workflow makes an order reference, charges it (task `charge`) and ships it (task `ship`);
the parent SIGKILLs the first process inside `ship`, and a fresh process resumes with
`invoke(None)`. Made outside any task (`ref_in_task=False`), the reference is made again on
resume: the saved charge keeps the old one and the parcel gets the new one. Made in a task of
its own, it is saved and reused like the charge. This module imports LangGraph; it runs in
the trial server's forked workers.
"""

from __future__ import annotations

import uuid

from langgraph.func import entrypoint, task
from langgraph.runtime import get_runtime

from labkit.bench.checkpoints import open_checkpointer
from labkit.bench.gate import report
from labkit.studies.retries.hooks import Hooks

__all__ = ["KILL_POINT", "first_process", "resume_process"]

KILL_POINT = "inside:ship"
CONFIG = {"configurable": {"thread_id": "order-1"}}


def hooks() -> Hooks:
    return get_runtime(Hooks).context


def new_ref() -> str:
    return f"ref-{uuid.uuid4().hex[:6]}"


@task
def make_ref() -> str:
    """The reference, made in a task: saved once made, reused on resume."""
    return new_ref()


@task
def charge(ref: str) -> int:
    charge_id, new = hooks().charge(ref, "42.00 EUR")
    hooks().ledger.line("charge", "ran", ref=ref, charge=charge_id, new=new)
    return charge_id


@task
def ship(ref: str) -> str:
    hooks().ledger.line("ship", "start", ref=ref)
    hooks().gate(KILL_POINT)
    hooks().ledger.line("ship", "end", ref=ref)
    return ref


def workflow(order: dict) -> dict:
    """The entrypoint's body: everything outside a task runs again on every resume."""
    ref = make_ref().result() if hooks().job["ref_in_task"] else new_ref()
    hooks().ledger.line("entrypoint", "top", ref=ref)
    charge_id = charge(ref).result()
    shipped = ship(ref).result()
    return {"charge": charge_id, "shipped_ref": shipped}


def compiled(job: dict) -> object:
    """The workflow as an entrypoint on this process's own checkpointer (each task's result
    saved `job["writes_delay_ms"]` late)."""
    return entrypoint(checkpointer=open_checkpointer(job), context_schema=Hooks)(workflow)


def first_process(job: dict) -> None:
    hooks = Hooks.for_job(job)
    compiled(job).invoke({"order": "order-1"}, CONFIG, durability="sync", context=hooks)


def resume_process(job: dict) -> None:
    result = compiled(job).invoke(None, CONFIG, durability="sync", context=Hooks.for_job(job))
    report(job, result=result)
