"""Study 004's advice, run: put the side effect in the last node (lesson 4).

The same effect (a ticket under a new UUID, no key to protect it) placed first (node a), in
the middle (b) or last (d) of study 004's linear graph, each explored by the crash explorer
under each durability mode: every crash point killed, recovered at once with `invoke(None)`,
judged by `lab.one_effect`. Per placement and mode, the crash points and what a crash at each
leaves: consistent, the effect twice (duplicate), the run lost with its effect made (an
orphan: nobody will resume it, and a new run makes it again) or lost before the effect.

Kernel side: the explorations run in the trial server's workers; the files read here are the
point folders' after recovery.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from labkit.bench.errors import check_choices
from labkit.studies.explorer.replay import explore
from labkit.studies.explorer.report import Exploration, PointResult
from labkit.studies.explorer.spec import DURABILITY_MODES
from labkit.studies.interrupt_resume.experiment import ticket_rows  # the service's rows, read

__all__ = ["FATES", "PLACEMENTS", "Placed", "explore_placements", "fate", "placed_row"]

NODE = {"first": "a", "middle": "b", "last": "d"}  # lab.effect_first, _middle, _last
PLACEMENTS = tuple(NODE)
TARGET = "labkit.studies.explorer.lab:effect_{placement}"
CHECKER = "labkit.studies.explorer.lab:one_effect"
# What a crash at a point leaves: the run whole with one effect; the effect twice; the run lost
# with its effect made (an orphan); the run lost before its effect was made; no outcome claimed
# (a worker failed by itself: explore again)
FATES = ("consistent", "duplicate", "orphaned", "lost_before", "failed")


@dataclass
class Placed:
    """One placement under one mode: the fate of a crash at each crash point, in order."""

    placement: str
    mode: str
    fates: list[str] = field(default_factory=list)
    exploration: Exploration | None = None

    @property
    def node(self) -> str:
        return NODE[self.placement]

    def count(self, which: str) -> int:
        return self.fates.count(which)

    @property
    def window(self) -> list[int]:
        """The crash points (numbered from 1) that repeat the effect or orphan it."""
        return [n for n, f in enumerate(self.fates, 1) if f in ("duplicate", "orphaned")]


def fate(point: PointResult) -> str:
    """What a crash at this point left: one of FATES (an outcome claimed by no worker, a run
    that failed by itself, is the explorer's own `failed`)."""
    if point.outcome in ("consistent", "duplicate", "failed"):
        return point.outcome
    return "orphaned" if ticket_rows(Path(point.run_dir)) else "lost_before"


def placed_row(placement: str, mode: str, exploration: Exploration) -> Placed:
    crashes = [p for p in exploration.points if p.n is not None]
    return Placed(placement, mode, [fate(p) for p in crashes], exploration)


def explore_placements(
    placements: tuple[str, ...] = PLACEMENTS, modes: tuple[str, ...] = DURABILITY_MODES
) -> list[Placed]:
    """Each placement under each mode, explored at every crash point (recovered at once only:
    the later restarts change nothing in a graph without clocks, and would triple the time)."""
    rows = []
    for placement in check_choices("placement", placements, PLACEMENTS):
        for mode in check_choices("durability mode", modes, DURABILITY_MODES):
            target = TARGET.format(placement=placement)
            found = explore(target, "graph", CHECKER, durability=mode, restart_at="now")
            rows.append(placed_row(placement, mode, found))
    return rows
