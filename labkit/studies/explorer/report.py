"""The explorer's report: the matrix by crash point, with the source line, the outcome and the
run folder of each, whether the exploration ran to its end or was stopped. Results only: it
runs nothing, and it says nothing.

A row holds codes (its outcome, its operation, the default checker's finding, why a write went
unwatched, what a point saved: `said`, beside its `detail` in the recording's words, which
names the point when a replay looks for it); the words are said from them by the view,
`labkit.views.explorer_words`. The trial server's fork that explores imports this module, so it
loads neither the catalogue nor a view.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from labkit.studies.explorer.node_caches import unjudged

__all__ = [
    "EXPLORED_FILE",
    "Exploration",
    "PROGRAM",
    "PointResult",
    "SERVICE",
    "outside_kinds",
    "read_explored",
    "replays_twice",
]

EXPLORED_FILE = "explored.jsonl"  # one line per crash point as it is explored
NO_CRASH = "no crash"  # the label of the run without a crash (a key in notebooks' dicts)
FILES_TOGETHER = " and "  # a commit seen in two files at once: "a.db and b.db"
SERVICE = "tcp://"  # an "outside" entry that is a network connection, not a file
PROGRAM = "program:"  # one that is a program the reader's code started ("program:curl")


def outside_kinds(entries: Iterable[str]) -> tuple[list[str], list[str], list[str]]:
    """The "outside" entries of a run by kind: files (paths), services ("tcp://host:port", as
    noted) and programs (by name, "curl")."""
    entries = list(entries)
    files = [e for e in entries if not e.startswith((SERVICE, PROGRAM))]
    services = [e for e in entries if e.startswith(SERVICE)]
    programs = [e.removeprefix(PROGRAM) for e in entries if e.startswith(PROGRAM)]
    return files, services, programs


@dataclass
class PointResult:
    """One row of the matrix: a crash point (or the run without a crash, `n` None)."""

    n: int | None
    op: str  # commit, fsync, put, put_writes; "run" for the run without a crash
    detail: str  # which file, which checkpoint, which node's writes
    where: str | None  # the reader's file:line
    outcome: str  # consistent, duplicate, lost, inconsistent, not_judged (a file no checker
    # can read differs: checker.py); "failed": no outcome claimed
    complaint: str | None  # the checker's line
    run_dir: str | None
    kill_mode: str = ""
    same_as: int | None = None  # not run again: its crash state equals this point's
    failure: str | None = None  # why no outcome is claimed (a worker did not do as planned)
    left: list[str] = field(default_factory=list)  # processes its run's code left, ended
    restart: str | None = None  # the restart its recovery came after (bench.restart.RESTARTS)
    finding: dict | None = None  # the default checker's complaint as a code and fields
    failed: dict | None = None  # the failure as a code and fields (replay.failed)
    said: dict | None = None  # what the point saved, as a code and fields (not a file's name)
    varies: bool = False  # two replays of its crash state gave two outcomes (async durability)

    def __post_init__(self) -> None:
        if self.failed:  # paths come back from JSON as lists: the same tuples as detected
            self.failed = {
                k: tuple(v) if isinstance(v, list) else v for k, v in self.failed.items()
            }

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
    stopped_by: dict | None = None  # the same as a code and fields (explorer.toml's [failed])
    unwatched: list[dict] = field(default_factory=list)  # writes it could not crash apart:
    # {"reason": a code of replay.UNWATCHED, "files": [...], "commits": a count or None}
    outside: list[str] = field(default_factory=list)  # files written outside the run folder
    spec: dict = field(default_factory=dict)  # how it was explored (replay.ExploreSpec)
    replaced: dict | None = None  # the reader's saver, explored on SQLite instead (savers.py):
    # {"saver": its class's name, "postgres": whether a server would have explored it as it is}
    clean: dict = field(default_factory=dict)  # the files as the run without a crash left them
    temporaries: list[str] = field(default_factory=list)  # files it wrote, then renamed or removed
    bookkeeping: list[str] = field(default_factory=list)  # of a service it called: no effects
    node_caches: list[str] = field(default_factory=list)  # LangGraph's, in SQLite: no effects

    @property
    def truth(self) -> tuple[dict, list[str], list[str]]:
        """What each recovery is judged by: the run without a crash, and the files that are none
        of its effects: its temporaries, and patterns of the files no checker sees (the
        bookkeeping of a service it called, LangGraph's node caches)."""
        return self.clean, self.temporaries, [*self.bookkeeping, *unjudged(self.node_caches)]

    @property
    def failing(self) -> list[PointResult]:
        return [p for p in self.points if p.outcome != "consistent"]

    @property
    def green(self) -> bool:
        """Every crash point explored, every one consistent, no write left unseen, and none
        outside the run folder (its crashes cannot be explored: a failure, never green)."""
        return self.stopped is None and not self.failing and not self.unwatched and not self.outside

    def matrix(self) -> str:
        """The matrix as a terminal table, for a test's assertion message: said by the view
        (`labkit.views.explorer_words.matrix_text`), the documented `found.matrix()`."""
        from labkit.views.explorer_words import matrix_text  # the kernel's, never the fork's

        return matrix_text(self)

    def point(self, n: int | None) -> PointResult:
        """The row of crash point `n` (None: the run without a crash)."""
        return next(p for p in self.points if p.n == n)

    def summary(self) -> str:
        """One line in the reader's language: points, states, what failed, why it stopped;
        said by the view (`labkit.views.explorer_words.summary_text`)."""
        from labkit.views.explorer_words import summary_text  # the kernel's, never the fork's

        return summary_text(self)

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


def replays_twice(spec: dict) -> bool:
    """Whether every crash state is replayed twice: a graph under durability "async" saves in
    a thread beside its nodes, so a replay killed at a point may die with more or less saved
    than the last one did, and its row may say otherwise on another run."""
    return spec.get("kind") == "graph" and spec.get("durability") == "async"
