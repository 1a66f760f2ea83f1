"""The lines lesson 9's cells print under their predictions: crash points with what they come
after and their outcome, each study's failing points, outcomes counted. Words from the
catalogue (explorer.toml's [lines] and [report]); never a dict, a tuple or a set as Python
prints it (issue 27)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from labkit.language import say
from labkit.studies.explorer.report import Exploration, PointResult
from labkit.views.explorer_words import crash_after, outcome_word, point_label

__all__ = ["outcome_counts", "point_line", "points_text", "verdicts_text"]


def point_line(point: PointResult, where: bool = False) -> str:
    """ "4: write ledger.jsonl → duplicate"; with `where`, the reader's line too."""
    fields = {"label": point_label(point), "after": crash_after(point)}
    fields["outcome"] = outcome_word(point.outcome)
    if where and point.where:
        return say("explorer.lines.point_at", where=point.where, **fields)
    return say("explorer.lines.point", **fields)


def points_text(points: Iterable[PointResult], where: bool = False) -> str:
    """A line per point (`point_line`), in the order given."""
    return "\n".join(point_line(p, where) for p in points)


def verdicts_text(explorations: Mapping[str, Exploration]) -> str:
    """A line per exploration, by the name given: its failing points with their outcomes, or
    that every one is consistent (as the summary's verdict says it)."""
    lines = []
    for name, found in explorations.items():
        failing = [f"{point_label(p)} {outcome_word(p.outcome)}" for p in found.failing]
        verdict = say("explorer.report.comma").join(failing)
        verdict = verdict or say("explorer.report.all_consistent")
        lines.append(say("explorer.lines.target", name=name, verdict=verdict))
    return "\n".join(lines)


def outcome_counts(points: Iterable[PointResult]) -> str:
    """Each outcome among these points and how many have it, most first."""
    counts = Counter(p.outcome for p in points).most_common()
    said = [say("explorer.lines.counted", word=outcome_word(o), count=n) for o, n in counts]
    return say("explorer.report.comma").join(said)
