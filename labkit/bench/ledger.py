"""The append-only ledger of study 004: every node writes a `start` and an `end` line, fsynced.

The ledger is the side effect the checkpointer knows nothing about: after a kill and a recovery,
counting its lines shows which nodes ran twice. Worker-side: standard library only.
"""

from __future__ import annotations

import os
import time
from collections import Counter

from labkit.bench.trace import append_json_line, read_json_lines

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
        append_json_line(self._fd, record)

    def close(self) -> None:
        os.close(self._fd)


def read_ledger(run_dir: str | os.PathLike) -> list[dict]:
    return read_json_lines(os.path.join(run_dir, LEDGER_FILE))


def rerun_nodes(lines: list[dict]) -> list[str]:
    """Nodes that started more than once, in the order they first started."""
    starts = Counter(line["node"] for line in lines if line["phase"] == "start")
    return [node for node in dict.fromkeys(ln["node"] for ln in lines) if starts[node] > 1]
