"""The lab's own studies as targets for the explorer, named like any reader's code:

    labkit.studies.commit_window.worker:effect_first   study 000 (and checkpoint_first,
                                                        idempotent; atomic with one_file=True)
    labkit.studies.explorer.lab:linear                 study 004's a → b → c → d
    labkit.studies.explorer.lab:parallel               study 004's start → p1, p2, p3 → join
    labkit.studies.explorer.lab:fresh_key              study 001: a new UUID per node run
    labkit.studies.explorer.lab:stable_key             study 001: the operation id as the key
      (judged by labkit.studies.explorer.lab:one_ticket)

Study 000's steps need nothing more. Study 004's and study 001's graphs take their first input
and their nodes' context from a worker's job; here they are said as a graph target says them
(`graphs.the_graph`). Imported only where targets are: in the explorer's graph workers.
"""

from __future__ import annotations

from labkit.bench.ledger import Ledger
from labkit.studies.durability import graphs as study_004
from labkit.studies.explorer.checker import CrashState
from labkit.studies.interrupt_resume import graphs as study_001

__all__ = ["fresh_key", "linear", "one_ticket", "parallel", "stable_key"]


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
