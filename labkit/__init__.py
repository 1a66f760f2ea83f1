"""labkit: crash a worker between two commits, recover in a fresh process, read what is left.

The names below load on first use (PEP 562), so that a worker process pays only for the few
standard modules it really needs. LangGraph is imported by labkit's trial server, never here.
Plotting and widget code lives in `labkit.views`, which workers never import.
"""

from importlib import import_module

_HOMES = {
    "KEY": "labkit.studies.commit_window.stores",
    "LabError": "labkit.bench.errors",
    "PAYLOAD": "labkit.studies.commit_window.stores",
    "NO_KILL": "labkit.studies.commit_window.orders",
    "ORDERS": "labkit.studies.commit_window.orders",
    "STUDY_000_CASES": "labkit.studies.commit_window.orders",
    "STUDY_000_REPORTED": "labkit.studies.commit_window.orders",
    "deliver_all": "labkit.studies.commit_window.receiver",
    "WriteOrder": "labkit.studies.commit_window.orders",
    "get_order": "labkit.studies.commit_window.orders",
    "KILL_MODES": "labkit.studies.commit_window.spec",
    "RunSpec": "labkit.studies.commit_window.spec",
    "OUTCOMES": "labkit.views.commit_window_words",
    "RunResult": "labkit.studies.commit_window.runs",
    "execute": "labkit.studies.commit_window.runs",
    "run": "labkit.studies.commit_window.runs",
    "RunFailed": "labkit.studies.commit_window.runs",
    "sweep": "labkit.studies.commit_window.sweeps",
    "compare_exits": "labkit.studies.commit_window.exits",
    "TOOL_STEPS": "labkit.studies.commit_window.tool_steps",
    "run_tool_step": "labkit.studies.commit_window.tool_runs",
    "DurabilitySpec": "labkit.studies.durability.experiment",
    "durability_matrix": "labkit.studies.durability.experiment",
    "run_trials": "labkit.studies.durability.experiment",
    "run_interrupt": "labkit.studies.interrupt_resume.experiment",
    "run_pitfall": "labkit.studies.durability.pitfalls",
    "OutboxSpec": "labkit.studies.outbox.experiment",
    "OUTBOX_KILL_POINTS": "labkit.studies.outbox.experiment",
    "OUTBOX_OUTCOMES": "labkit.studies.outbox.experiment",
    "run_outbox": "labkit.studies.outbox.experiment",
    "outbox_sweep": "labkit.studies.outbox.experiment",
    "run_outbox_graph": "labkit.studies.outbox.replay",
    "OutboxStepSession": "labkit.studies.outbox.stepping",
    "CallSpec": "labkit.studies.unknown_outcome.spec",
    "run_call": "labkit.studies.unknown_outcome.experiment",
    "sweep_calls": "labkit.studies.unknown_outcome.experiment",
    "CallStepSession": "labkit.studies.unknown_outcome.stepping",
    "ClaimSpec": "labkit.studies.leases.spec",
    "run_claim": "labkit.studies.leases.experiment",
    "sweep_claims": "labkit.studies.leases.experiment",
    "ClaimStepSession": "labkit.studies.leases.stepping",
    "run_graph_race": "labkit.studies.leases.resume",
    "explore": "labkit.studies.explorer.replay",
    "lab_folder": "labkit.studies.explorer.target",
    "set_language": "labkit.language",
    "clean_runs": "labkit.bench.folders",
    "runs_home": "labkit.bench.folders",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> object:
    if name not in _HOMES:
        raise AttributeError(f"module 'labkit' has no attribute {name!r}")
    return getattr(import_module(_HOMES[name]), name)


def __dir__() -> list[str]:
    return __all__
