"""The lab's own studies as targets for the explorer, named like any reader's code:

    labkit.studies.commit_window.worker:effect_first   study 000 (and checkpoint_first,
                                                        idempotent; atomic with one_file=True)
    labkit.studies.explorer.lab:linear                 study 004's a → b → c → d
    labkit.studies.explorer.lab:parallel               study 004's start → p1, p2, p3 → join
    labkit.studies.explorer.lab:fresh_key              study 001: a new UUID per node run
    labkit.studies.explorer.lab:stable_key             study 001: the operation id as the key
      (judged by labkit.studies.explorer.lab:one_ticket)
    labkit.studies.explorer.lab:effect_first           study 004's linear graph, one ticket
    labkit.studies.explorer.lab:effect_middle          made in a, b or d (its advice: put the
    labkit.studies.explorer.lab:effect_last            effect last); judged by one_effect

Study 000's steps need nothing more. Study 004's and study 001's graphs take their first input
and their nodes' context from a worker's job; here they are said as a graph target says them
(`graphs.the_graph`). Imported only where targets are: in the explorer's graph workers.
"""

from __future__ import annotations

import uuid

from labkit.bench.ledger import Ledger
from labkit.bench.tickets import TICKETS_FILE, Tickets
from labkit.studies.durability import graphs as study_004
from labkit.studies.explorer.checker import CrashState, Finding
from labkit.studies.interrupt_resume import graphs as study_001

__all__ = [
    "effect_first",
    "effect_last",
    "effect_middle",
    "fresh_key",
    "linear",
    "one_effect",
    "one_ticket",
    "parallel",
    "stable_key",
]


def ledger_context(run_dir: str) -> study_004.RunContext:
    """Study 004's nodes write their ledger lines (its side effect) into the run folder."""
    return study_004.RunContext(Ledger(run_dir))


def study_001_graph(key: str) -> dict:
    """Study 001's graph (create a ticket, then a receipt review) under a key rule."""
    return {
        "graph": study_001.SHAPES["combined"],
        "input": study_001.FIRST_INPUT,
        "context": lambda run_dir: study_001.RunContext.for_job({"run_dir": run_dir, "key": key}),
    }


linear = {"graph": study_004.SHAPES["linear"], "input": {"log": []}, "context": ledger_context}
parallel = {"graph": study_004.SHAPES["parallel"], "input": {"log": []}, "context": ledger_context}
fresh_key = study_001_graph("fresh")
stable_key = study_001_graph("stable")


def one_ticket(state: CrashState) -> str | None:
    """Study 001's rule: one request, one ticket. (Its ledger counts node runs, which a resume
    repeats by design: they are not effects.)"""
    tickets = state.rows("ticket")
    if len(tickets) > 1:
        return f"duplicate: {len(tickets)} tickets for one request"
    if not tickets or not state.finished:
        return "lost: no ticket, or the run did not finish"
    return None


def effect_placed(node: str) -> dict:
    """Study 004's linear graph, its ledger lines as they are, and one side effect in one
    node: a ticket under a new UUID (no key to protect it), asked for between the node's
    `start` and `end` lines, where the study's kill lands."""

    def context(run_dir: str) -> study_004.RunContext:
        def effect(name: str) -> None:
            if name == node:  # the service opened here: its table's commit is the node's too
                tickets = Tickets(run_dir)
                try:
                    tickets.create("study-004", str(uuid.uuid4()), name)
                finally:
                    tickets.close()

        return study_004.RunContext(Ledger(run_dir), inside=effect)

    return {"graph": study_004.SHAPES["linear"], "input": {"log": []}, "context": context}


effect_first = effect_placed("a")  # placement.NODE: the lesson's words for where it is
effect_middle = effect_placed("b")
effect_last = effect_placed("d")


def one_effect(state: CrashState) -> Finding | None:
    """The placed effect exactly once and the run finished: the ledger's lines are node runs,
    which a recovery repeats by design, not the effect. Answered as the default checker's
    findings, so the views say it in the reader's language."""
    if state.recovery_error:
        return Finding("recovery_failed", error=state.recovery_error)
    made = len(state.rows("ticket"))
    if made != 1:
        code = "holds_more" if made > 1 else "holds_fewer"
        return Finding(code, file=TICKETS_FILE, table="ticket", count=made, clean=1)
    if not state.finished:
        return Finding("unfinished")
    return None
