"""Name what a call and its recovery left behind: the Jepsen history, and the outcome's word.

Jepsen (jepsen.io) records every operation as an invoke and a completion: `ok` (it happened),
`fail` (it did not), or `info` (unknown: it may or may not have happened). A process that died
before its answer leaves an invoke without a completion: that op is `info` too. A timeout is
`info`, never `fail`: the service may well have done the work.
"""

from __future__ import annotations

from labkit.bench.failures import FAILED
from labkit.language import Messages

__all__ = ["FAILED", "JEPSEN_TYPES", "OUTCOMES", "classify", "jepsen_ops"]

# What each Jepsen type and each outcome word means, in the reader's language (unknown_outcome.toml)
JEPSEN_TYPES = Messages("unknown_outcome.jepsen", ("ok", "fail", "info"))
OUTCOMES = Messages(
    "unknown_outcome.outcomes",
    ("consistent", "unknown-resolved", "duplicate", "orphan", "lost", "unresolved", FAILED),
)


def jepsen_ops(history: list[dict]) -> list[dict]:
    """One op per invoke, in order: its process, f, key, type, value, error, and when it
    started and ended (`end_ns` None: never). An invoke its process never completed (killed)
    is `info`, with why."""
    ops: list[dict] = []
    pending: dict[str, dict] = {}
    for line in history:
        if line["type"] == "invoke":
            op = {"process": line["process"], "f": line["f"], "key": line["key"]}
            op.update(type="info", value=None, error="the process died before the answer")
            op.update(start_ns=line.get("t_ns"), end_ns=None)
            pending[line["process"]] = op
            ops.append(op)
        elif line["process"] in pending:
            op = pending.pop(line["process"])
            op.update(type=line["type"], value=line.get("value"), error=line.get("error"))
            op.update(end_ns=line.get("t_ns"))
    return ops


def classify(tickets: int, status: str | None, first_unknown: bool) -> str:
    """One word for the service's tickets against the caller's checkpoint (see OUTCOMES)."""
    if tickets > 1:
        return "duplicate"
    if status == "unknown" or status is None:
        return "unresolved"
    if status == "failed":
        return "orphan" if tickets else "consistent"
    if tickets == 0:
        return "lost"
    return "unknown-resolved" if first_unknown else "consistent"
