"""The explorer's report: the matrix by crash point, with the source line, the outcome and the
run folder of each, whether the exploration ran to its end or was stopped, and the same as
plain text. Results only: it runs nothing.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = ["EXPLORED_FILE", "Exploration", "PointResult", "matrix_text", "read_explored"]

EXPLORED_FILE = "explored.jsonl"  # one line per crash point as it is explored
NO_CRASH = "no crash"


@dataclass
class PointResult:
    """One row of the matrix: a crash point (or the run without a crash, `n` None)."""

    n: int | None
    op: str  # commit, fsync, put, put_writes; "run" for the run without a crash
    detail: str  # which file, which checkpoint, which node's writes
    where: str | None  # the reader's file:line
    outcome: str  # consistent, duplicate, lost, inconsistent; "failed": no outcome claimed
    complaint: str | None  # the checker's line
    run_dir: str | None
    kill_mode: str = ""
    same_as: int | None = None  # not run again: its crash state equals this point's
    failure: str | None = None  # why no outcome is claimed (a worker did not do as planned)

    @property
    def label(self) -> str:
        return NO_CRASH if self.n is None else f"{self.n}"

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Exploration:
    """Every crash point of one run of the reader's code and what a crash there leaves."""

    target: str
    kind: str
    folder: str
    points: list[PointResult] = field(default_factory=list)  # the run without a crash first
    crash_points: int = 0  # recorded in the run without a crash
    crash_states: int = 0  # distinct states among them: each explored once
    seconds: float = 0.0
    stopped: str | None = None  # why it ended before every state was explored
    unwatched: list[str] = field(default_factory=list)  # writes it could not crash apart
    spec: dict = field(default_factory=dict)  # how it was explored (replay.ExploreSpec)
    clean: dict = field(default_factory=dict)  # the files as the run without a crash left them

    @property
    def failing(self) -> list[PointResult]:
        return [p for p in self.points if p.outcome != "consistent"]

    @property
    def green(self) -> bool:
        """Every crash point explored, every one consistent, and no write left unseen."""
        return self.stopped is None and not self.failing and not self.unwatched

    def point(self, n: int | None) -> PointResult:
        """The row of crash point `n` (None: the run without a crash)."""
        return next(p for p in self.points if p.n == n)

    def summary(self) -> str:
        explored = sum(p.n is not None and p.same_as is None for p in self.points)
        head = (
            f"{self.target}: {self.crash_points} crash points, {self.crash_states} crash "
            f"states, {explored} explored in {self.seconds:.2f} s"
        )
        verdict = (
            "every one consistent"
            if not self.failing
            else f"{len(self.failing)} failing: "
            + ", ".join(f"{p.label} {p.outcome}" for p in self.failing)
        )
        unseen = f"; not seen apart: {'; '.join(self.unwatched)}" if self.unwatched else ""
        stopped = f"; stopped: {self.stopped}" if self.stopped else ""
        return f"{head}; {verdict}{unseen}{stopped}"

    def to_json(self) -> dict:
        return {**asdict(self), "green": self.green}

    @classmethod
    def from_json(cls, data: dict) -> Exploration:
        fields = {k: v for k, v in data.items() if k != "green"}
        return cls(**{**fields, "points": [PointResult(**p) for p in data["points"]]})


def read_explored(folder: str | Path) -> list[PointResult]:
    """The rows an exploration wrote as it went (all of them, or those before it stopped)."""
    path = Path(folder) / EXPLORED_FILE
    if not path.exists():
        return []
    return [PointResult(**json.loads(line)) for line in path.read_text().splitlines() if line]


def matrix_text(exploration: Exploration) -> str:
    """The matrix as a terminal table: point, operation, source line, outcome, run folder."""
    rows = [("point", "crash after", "source", "outcome", "what is wrong · run folder")]
    for p in exploration.points:
        what = f"{p.op} {p.detail}".strip()
        said = p.failure or (p.complaint or "").removeprefix(f"{p.outcome}: ")
        folder = f"same state as point {p.same_as}" if p.same_as else p.run_dir or ""
        rows.append(
            (p.label, what, p.where or "", p.outcome, " · ".join(filter(None, [said, folder])))
        )
    widths = [min(max(len(r[i]) for r in rows), 48) for i in range(4)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(r[:4], widths, strict=True))
        + "  "
        + r[4]
        for r in rows
    ]
    return "\n".join([*lines, exploration.summary()])
