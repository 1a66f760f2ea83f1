"""Talk to an idempotent receiver directly: what it answers to retries and to changed payloads.

The receiver is study 000's `effect.db` with `UNIQUE(op_key)`: the same key and payload get
the original receipt back, the same key with another payload is refused, and a new key makes
a new receipt. Each delivery is its own transaction on a real SQLite file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from labkit.bench.errors import check_folder, refusal
from labkit.bench.folders import holds_run_dirs, new_run_dir
from labkit.bench.snapshot import Snapshot, take_snapshot
from labkit.bench.tickets import PayloadConflict
from labkit.bench.trace import Trace
from labkit.studies.commit_window.stores import Store, create_files

__all__ = ["Delivery", "deliver_all"]


@dataclass
class Delivery:
    key: str
    payload: str
    receipt_id: int | None  # None when refused
    refused: dict | None  # why, when refused: {"code": "payload_conflict", "held", "sent"}


@holds_run_dirs
def deliver_all(
    deliveries: Iterable[tuple[str, str]], out: Path | str | None = None
) -> tuple[list[Delivery], Snapshot]:
    """Send each (key, payload) in turn to a fresh deduplicating receiver; return its answers
    and the receipts table it holds afterwards."""
    lone = isinstance(deliveries, str) or not isinstance(deliveries, Iterable)
    pairs = [deliveries] if lone else list(deliveries)  # all checked before the folder is made
    for pair in pairs:
        two = isinstance(pair, tuple | list) and len(pair) == 2
        if not two or not all(isinstance(text, str) for text in pair):
            raise refusal("deliveries_form", value=repr(pair))
    run_dir = new_run_dir(check_folder("out", out), prefix="receiver-")
    create_files(run_dir, ("effect.db",), unique_key=True)
    trace = Trace(run_dir, "client")
    receiver = Store(run_dir, "effect.db", trace)
    answers = []
    for key, payload in pairs:
        try:
            with receiver:
                answers.append(
                    Delivery(key, payload, receiver.add_receipt_once(key, payload), None)
                )
        except PayloadConflict as conflict:
            refused = {"code": "payload_conflict", "held": conflict.held, "sent": conflict.sent}
            answers.append(Delivery(key, payload, None, refused))
    receiver.close()
    trace.close()
    return answers, take_snapshot(run_dir, ("effect.db",))
