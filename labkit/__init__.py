"""labkit: crash a worker between two commits, recover in a fresh process, read what is left.

The names below load on first use (PEP 562), so that a worker process pays only for the few
standard modules it really needs. LangGraph is imported by labkit's trial server, never here.
Plotting and widget code lives in `labkit.views`, which workers never import.
"""

from importlib import import_module

_HOMES = {
    "LabError": "labkit.errors",
    "NO_KILL": "labkit.orders",
    "ORDERS": "labkit.orders",
    "STUDY_000_CASES": "labkit.orders",
    "deliver_all": "labkit.receiver",
    "WriteOrder": "labkit.orders",
    "get_order": "labkit.orders",
    "KILL_MODES": "labkit.spec",
    "RunSpec": "labkit.spec",
    "OUTCOMES": "labkit.outcome",
    "RunResult": "labkit.runs",
    "execute": "labkit.runs",
    "run": "labkit.runs",
    "sweep": "labkit.sweeps",
    "DurabilitySpec": "labkit.durability",
    "durability_matrix": "labkit.durability",
    "run_trials": "labkit.durability",
    "run_interrupt": "labkit.interrupts",
    "run_pitfall": "labkit.pitfalls",
    "clean_runs": "labkit.folders",
    "runs_home": "labkit.folders",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> object:
    if name not in _HOMES:
        raise AttributeError(f"module 'labkit' has no attribute {name!r}")
    return getattr(import_module(_HOMES[name]), name)


def __dir__() -> list[str]:
    return __all__
