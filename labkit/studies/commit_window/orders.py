"""The four write orders of study 000 and the kill points each one passes, in order.

A kill point is a boundary at which a crash leaves a different state on disk. The worker
(`labkit.studies.commit_window.worker`) announces every one it passes; a test checks that a
clean run passes exactly the points declared here, so this table and the worker cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from labkit.bench.errors import check_choice

__all__ = [
    "NO_KILL",
    "ORDERS",
    "STUDY_000_CASES",
    "STUDY_000_REPORTED",
    "WriteOrder",
    "get_order",
]

NO_KILL = "none"


@dataclass(frozen=True)
class WriteOrder:
    """One way to commit the business effect and the workflow checkpoint."""

    name: str
    kill_points: tuple[str, ...]
    shared_file: bool = False  # True: receipts and progress live in one SQLite file
    receiver_dedupes: bool = False  # True: the receiver enforces UNIQUE(op_key)

    @property
    def files(self) -> tuple[str, ...]:
        """The SQLite files a run of this order creates."""
        return ("control.db",) if self.shared_file else ("control.db", "effect.db")

    def check_kill_point(self, point: str) -> str:
        """Return `point` if this order has it (or it is "none"), else raise LabError."""
        return check_choice("kill point", point, (*self.kill_points, NO_KILL), of=self.name)


ORDERS: dict[str, WriteOrder] = {
    order.name: order
    for order in (
        WriteOrder(
            "effect_first",
            ("start", "effect", "checkpoint"),
        ),
        WriteOrder(
            "checkpoint_first",
            ("start", "checkpoint", "effect"),
        ),
        WriteOrder(
            "atomic",
            ("start", "in_transaction", "committed"),
            shared_file=True,
        ),
        WriteOrder(
            "idempotent",
            ("start", "effect", "checkpoint"),
            receiver_dedupes=True,
        ),
    )
}


def get_order(name: str) -> WriteOrder:
    """Look up a write order by name; an unknown name raises LabError listing the four."""
    return ORDERS[check_choice("write order", name, ORDERS)]


# The five (order, kill point) cases study 000 ran, in the order of its table, with what it
# reported (Windows 11, Python 3.12): (done, receipts) before recovery, and after it.
STUDY_000_REPORTED = {
    ("effect_first", "effect"): ((0, 1), (1, 2)),
    ("checkpoint_first", "checkpoint"): ((1, 0), (1, 0)),
    ("atomic", "in_transaction"): ((0, 0), (1, 1)),
    ("atomic", "committed"): ((1, 1), (1, 1)),
    ("idempotent", "effect"): ((0, 1), (1, 1)),
}
STUDY_000_CASES = tuple(STUDY_000_REPORTED)
