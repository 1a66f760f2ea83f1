"""One timeline for every lesson: a lane per process (or per store), bars for transactions,
calls and leases, marks for commits and kills, arrows between processes, spans behind them.

A study says *what* happened in these terms (a `Timeline`); `lanes_drawing.draw` draws any of
them the same way, with one palette and labels that never overlap: the four lessons' drawings
used to place their own words, and collided.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["MARKERS", "Arrow", "Bar", "Mark", "Panel", "Span", "Timeline"]

MARKERS = {  # a mark's meaning: its marker, colour (palette.TIMELINE) and size in points
    "commit": ("D", "mark", 7),
    "write": ("o", "mark", 7),
    "request": ("|", "mark", 12),
    "claim": ("^", "mark", 8),
    "renew": ("d", "mark", 8),
    "done": ("s", "mark", 7),
    "refused": ("X", "kill", 9),
    "point": ("|", "neutral", 12),
    "exit": ("o", "neutral", 6),
    "checkpoint": ("s", "progress", 7),
    "expiry": ("|", "held", 16),
    "kill": ("X", "kill", 12),
    "note": ("", "neutral", 0),  # words without a mark (a process's name, "never committed")
}


@dataclass(frozen=True)
class Bar:
    """A span of time in a lane: a transaction, a call, a lease. `faded`: it never ended."""

    lane: str
    start: float
    end: float
    meaning: str  # a key of palette.TIMELINE
    legend: str = ""  # the legend's words for it ("": not in the legend)
    hatch: str | None = None
    faded: bool = False


@dataclass(frozen=True)
class Mark:
    """A moment in a lane, with its words beside it (placed by the drawing)."""

    lane: str
    x: float
    meaning: str  # a key of MARKERS
    text: str = ""


@dataclass(frozen=True)
class Arrow:
    """From a moment in one lane to a moment in another: one process starting or asking another."""

    lane: str
    x: float
    to_lane: str
    to_x: float


@dataclass(frozen=True)
class Span:
    """A stretch of time shaded behind the lanes (all of them, or only `lanes`)."""

    start: float
    end: float
    meaning: str
    legend: str
    hatch: str | None = None
    edge: str | None = None  # a meaning whose colour draws the hatching
    lanes: tuple[str, ...] = ()


@dataclass
class Panel:
    """One clock: a process drawn on its own clock gets a panel (lesson 1's first and recovery
    workers); most timelines have one."""

    title: str = ""
    bars: list[Bar] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    arrows: list[Arrow] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    lives: list[tuple[str, float, float]] = field(default_factory=list)  # lane, from, to
    rules: list[float] = field(default_factory=list)  # a dashed line across every lane

    def xs(self) -> list[float]:
        """Every time this panel draws, so that its axis holds them all."""
        return [
            *(x for b in self.bars for x in (b.start, b.end)),
            *(m.x for m in self.marks),
            *(x for a in self.arrows for x in (a.x, a.to_x)),
            *(x for s in self.spans for x in (s.start, s.end)),
            *(x for _, start, end in self.lives for x in (start, end)),
            *self.rules,
        ]


@dataclass
class Timeline:
    """Lanes top to bottom as (key, the reader's name), the panels side by side, the x axis's
    words, and a title above them all."""

    lanes: list[tuple[str, str]]
    panels: list[Panel]
    x_label: str
    title: str = ""
