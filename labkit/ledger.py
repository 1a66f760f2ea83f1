"""The append-only ledger of study 004: every node writes a `start` and an `end` line, fsynced.

The ledger is the side effect the checkpointer knows nothing about: after a kill and a recovery,
counting its lines shows which nodes ran twice. Worker-side: standard library only.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter

__all__ = ["LEDGER_FILE", "Ledger", "read_ledger", "rerun_nodes"]

LEDGER_FILE = "ledger.jsonl"


class Ledger:
    """One process's handle on the run's ledger; safe to use from the graph's worker threads."""

    def __init__(self, run_dir: str | os.PathLike) -> None:
        self._fd = os.open(
            os.path.join(run_dir, LEDGER_FILE), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644
        )

    def line(self, node: str, phase: str, **extra: object) -> None:
        """Append one line and fsync it: once this returns, the line survives any kill."""
        record = {"node": node, "phase": phase, "pid": os.getpid(), "t_ns": time.monotonic_ns()}
        record.update(extra)
        os.write(self._fd, (json.dumps(record) + "\n").encode())  # O_APPEND: one write, one line
        os.fsync(self._fd)


def read_ledger(run_dir: str | os.PathLike) -> list[dict]:
    path = os.path.join(run_dir, LEDGER_FILE)
    if not os.path.exists(path):
        return []
    with open(path) as lines:
        return [json.loads(line) for line in lines if line.strip()]


def rerun_nodes(lines: list[dict]) -> list[str]:
    """Nodes that started more than once, in the order they first started."""
    starts = Counter(line["node"] for line in lines if line["phase"] == "start")
    return [node for node in dict.fromkeys(ln["node"] for ln in lines) if starts[node] > 1]
