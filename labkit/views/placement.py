"""The view of the effect's placement (lesson 4): per placement of the one side effect in study
004's linear graph and per durability mode, what a crash at each crash point leaves, counted
and drawn as one strip a placement, and the lines that say what "last" buys and what not."""

from __future__ import annotations

from collections.abc import Sequence

from IPython.display import HTML, display

from labkit.language import say
from labkit.studies.explorer.placement import FATES, PLACEMENTS, Placed
from labkit.views.explorer_words import crash_after
from labkit.views.tables import grid_html, headers

__all__ = ["placement_html", "placement_lines", "show_placements", "strip", "window_line"]

COUNTED = ("consistent", "duplicate", "orphaned", "lost_before")


def strip(row: Placed) -> str:
    """The crash points in order, one mark each: the placement's matrix in one line."""
    return "".join(say(f"placement.mark.{fate}") for fate in row.fates)


def placement_html(rows: Sequence[Placed]) -> str:
    """A row per placement and mode: crash points, each fate's count, and the strip."""
    header = headers("placement.column", ("effect_in", "mode", "points"))
    header += headers("placement.fate", COUNTED)
    header.append(say("placement.column.strip"))
    body = [
        [say("placement.node", placement=say(f"placement.where.{r.placement}"), node=r.node)]
        + [r.mode, len(r.fates)]
        + [r.count(fate) for fate in COUNTED]
        + [strip(r)]
        for r in rows
    ]
    return grid_html(header, body)


def legend() -> str:
    marks = (
        say(
            "placement.legend_item",
            mark=say(f"placement.mark.{f}"),
            fate=say(f"placement.fate.{f}"),
        )
        for f in FATES
    )
    return say("placement.legend", marks=say("facts.list_separator").join(marks))


def placement_lines(rows: Sequence[Placed]) -> list[str]:
    """Per mode, how many crash points repeat or orphan the effect at each placement."""
    lines = []
    for mode in dict.fromkeys(r.mode for r in rows):
        by = {r.placement: r for r in rows if r.mode == mode}
        counts = say("facts.list_separator").join(
            say(
                "placement.count",
                placement=say(f"placement.where.{p}"),
                bad=len(by[p].window),
                points=len(by[p].fates),
            )
            for p in PLACEMENTS
            if p in by
        )
        lines.append(say("placement.line", mode=mode, counts=counts))
    return lines


def window_line(row: Placed) -> str:
    """Where the placement's window is: its crash points, from the first after which a crash
    repeats or orphans the effect to the save that closes it (the next point that does not)."""
    points = [p for p in row.exploration.points if p.n is not None]
    if not row.window:
        return say("placement.no_window", node=row.node, mode=row.mode)
    first, last = row.window[0], row.window[-1]
    closing = next((p for p in points if p.n > last and row.fates[p.n - 1] == "consistent"), None)
    return say(
        "placement.window",
        node=row.node,
        mode=row.mode,
        points=say("facts.list_separator").join(str(n) for n in row.window),
        opened=crash_after(points[first - 1]),
        closed=crash_after(closing) if closing else say("placement.never_closed"),
    )


def show_placements(rows: Sequence[Placed]) -> None:
    display(HTML(placement_html(rows)))
    print(legend())
    for line in placement_lines(rows):
        print(line)
