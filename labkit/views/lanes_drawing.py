"""Draws a `lanes.Timeline` with matplotlib, its words where none overlaps another.

The figure is laid out in pixels, not left to `tight_layout`: every label is measured with the
renderer first, then put in the first row above its lane where it overlaps nothing, starting
at its mark or ending there; a lane is as tall as its rows need. Text is 9 pt or more at the
figure's own size (800 px wide at `figures.DPI`, drawn unscaled in a notebook's output area).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from labkit.views.figures import DPI, new_figure
from labkit.views.lanes import MARKERS, Mark, Panel, Timeline
from labkit.views.palette import NEUTRAL, TIMELINE

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["FONT", "draw"]

FONT = 9  # the smallest text drawn, in points
NAME_FONT = 10  # lane names and titles
WIDTH_IN = 10
LANE_PX = 26  # a lane's own height: its bars and marks; its labels' rows come above
BAR_PX = 10
GAP_PX = 8  # the least room between two labels of one row
PAD_PX = 6
LIFE = "#BBBBBB"


@dataclass(frozen=True)
class Label:
    mark: Mark
    left: float  # pixels from the axes' left edge
    row: int
    style: dict
    height: float  # pixels


def draw(timeline: Timeline) -> tuple[Figure, list[Axes]]:
    """The figure, and its axes (one per panel, left to right)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = new_figure((WIDTH_IN, 3))
    fig.set_dpi(DPI)
    renderer = FigureCanvasAgg(fig).get_renderer()

    def measure(text: str, **style: object) -> tuple[float, float]:
        drawn = fig.text(0, 0, text, **style)
        box = drawn.get_window_extent(renderer)
        drawn.remove()
        return box.width, box.height

    width = WIDTH_IN * DPI
    left = max(measure(name, fontsize=NAME_FONT)[0] for _, name in timeline.lanes) + 16
    gap = 28
    n = len(timeline.panels)
    axes_w = (width - left - 14 - gap * (n - 1)) / n
    ranges = [x_range(p) for p in timeline.panels]
    labels = [place(p, *r, axes_w, measure) for p, r in zip(timeline.panels, ranges, strict=True)]
    heights = [la.height for ps in labels for la in ps]
    row_px = max([measure("Hg", fontsize=FONT)[1], *heights]) + 4
    lines, bands = lane_bands([k for k, _ in timeline.lanes], labels, row_px)
    axes_h = max(high for _, high in bands.values())
    legend = add_legend(fig, timeline, width, renderer)
    legend_h = legend.get_window_extent(renderer).height if legend else 0
    label_h = measure(timeline.x_label, fontsize=FONT)[1]
    bottom = PAD_PX + legend_h + PAD_PX + label_h + 6 + measure("0", fontsize=FONT)[1] + 10
    top = PAD_PX + (measure(timeline.title, fontsize=NAME_FONT)[1] + 6 if timeline.title else 0)
    if any(p.title for p in timeline.panels):
        top += max(measure(p.title, fontsize=NAME_FONT)[1] for p in timeline.panels) + 12
    height = bottom + axes_h + top
    fig.set_size_inches(WIDTH_IN, height / DPI)
    if legend:
        legend.set_bbox_to_anchor((0.5, PAD_PX / height), transform=fig.transFigure)
    fig.supxlabel(timeline.x_label, y=(2 * PAD_PX + legend_h) / height, va="bottom", fontsize=FONT)
    if timeline.title:
        fig.suptitle(timeline.title, y=1 - PAD_PX / height, va="top", fontsize=NAME_FONT)
    axes = []
    for i, (panel, (lo, hi), placed) in enumerate(
        zip(timeline.panels, ranges, labels, strict=True)
    ):
        where = [(left + i * (axes_w + gap)) / width, bottom / height, axes_w / width]
        ax = fig.add_axes([*where, axes_h / height])
        ax.set_xlim(lo, hi)
        ax.set_ylim(0, axes_h)
        draw_panel(ax, panel, lines, bands, axes_h)
        for label in placed:
            put_label(ax, label, lines, row_px, (hi - lo) / axes_w)
        names = [name for _, name in timeline.lanes]
        ax.set_yticks([lines[k] for k, _ in timeline.lanes], names)
        ax.tick_params(axis="y", length=0, labelsize=NAME_FONT, labelleft=i == 0)
        ax.tick_params(axis="x", labelsize=FONT)
        ax.grid(axis="x", alpha=0.3)
        if panel.title:
            ax.set_title(panel.title, fontsize=NAME_FONT, pad=6)
        axes.append(ax)
    return fig, axes


def lane_bands(lanes: list[str], labels: list[list[Label]], row_px: float) -> tuple[dict, dict]:
    """Each lane's line and band (bottom, top) in pixels from the axes' foot, the first lane on
    top: a band holds the lane's bars and marks, and above them the rows its labels took."""
    lines, bands, y = {}, {}, 0.0
    for lane in reversed(lanes):
        rows = 1 + max((la.row for ps in labels for la in ps if la.mark.lane == lane), default=-1)
        bands[lane] = (y, y + LANE_PX + rows * row_px + (4 if rows else 0))
        lines[lane] = y + LANE_PX / 2
        y = bands[lane][1]
    return lines, bands


def x_range(panel: Panel) -> tuple[float, float]:
    xs = panel.xs() or [0.0]
    lo, hi = min(xs), max(xs)
    room = (hi - lo or 1.0) * 0.04
    return lo - room, hi + room


def label_style(meaning: str) -> dict:
    colour = {"kill": TIMELINE["kill"], "point": "#555555", "note": "#555555"}.get(meaning)
    style = {"fontsize": FONT, "color": colour or "black"}
    return {**style, "fontweight": "bold"} if meaning == "kill" else style


def place(panel: Panel, lo: float, hi: float, axes_w: float, measure: object) -> list[Label]:
    """Each mark's words in the lowest row of its lane where they overlap no other words:
    starting at the mark, or ending at it; never past the axes' edges."""
    rows: dict[tuple[str, int], list[tuple[float, float]]] = {}
    placed = []
    for mark in sorted((m for m in panel.marks if m.text), key=lambda m: m.x):
        style = label_style(mark.meaning)
        w, h = measure(mark.text, **style)
        px = (mark.x - lo) / (hi - lo) * axes_w
        tries = [min(max(c, 3.0), axes_w - w - 3) for c in (px - 3, px - w + 3)]
        row = 0
        while True:
            taken = rows.setdefault((mark.lane, row), [])
            free = [c for c in tries if not any(overlap(c, c + w, a, b) for a, b in taken)]
            if free:
                taken.append((free[0], free[0] + w))
                placed.append(Label(mark, free[0], row, style, h))
                break
            row += 1
    return placed


def overlap(left: float, right: float, a: float, b: float) -> bool:
    """Whether [left, right] comes within GAP_PX of [a, b]."""
    return left < b + GAP_PX and right + GAP_PX > a


def put_label(ax: Axes, label: Label, lines: dict, row_px: float, per_px: float) -> None:
    """The words, on a white ground (over hatching and grid), joined to a mark they left."""
    lane_y, lo = lines[label.mark.lane], ax.get_xlim()[0]
    y = lane_y + LANE_PX / 2 + label.row * row_px
    if label.row:
        ax.plot([label.mark.x] * 2, [lane_y + 6, y], color=LIFE, lw=0.8, ls=":", zorder=1)
    ax.text(
        lo + label.left * per_px,
        y,
        label.mark.text,
        ha="left",
        va="bottom",
        zorder=5,
        bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 0.5},
        **label.style,
    )


def draw_panel(ax: Axes, panel: Panel, lines: dict, bands: dict, axes_h: float) -> None:
    """Spans behind, then lives, bars, arrows and marks."""
    from matplotlib.colors import to_rgba

    for s in panel.spans:
        lanes = s.lanes or tuple(bands)
        low, high = min(bands[k][0] for k in lanes), max(bands[k][1] for k in lanes)
        ax.axvspan(
            s.start,
            s.end,
            ymin=low / axes_h,
            ymax=high / axes_h,
            facecolor=to_rgba(TIMELINE[s.meaning], 0.5),
            edgecolor=TIMELINE[s.edge] if s.edge else "none",
            hatch=s.hatch,
            linewidth=0,
            zorder=0,
        )
    for lane, start, end in panel.lives:
        ax.plot([start, end], [lines[lane]] * 2, color=LIFE, lw=1, zorder=1)
    for x in panel.rules:
        ax.axvline(x, color="#777777", ls="--", lw=1, zorder=1)
    for b in panel.bars:
        colour = TIMELINE.get(b.meaning, NEUTRAL)
        ax.barh(
            lines[b.lane],
            b.end - b.start,
            left=b.start,
            height=BAR_PX,
            facecolor=to_rgba(colour, 0.35 if b.faded else 0.85),
            edgecolor=colour,
            hatch=b.hatch,
            linewidth=0.8 if b.hatch else 0,
            zorder=2,
        )
    for a in panel.arrows:
        ax.annotate(
            "",
            (a.to_x, lines[a.to_lane]),
            (a.x, lines[a.lane]),
            arrowprops={"arrowstyle": "->", "color": "#555555", "lw": 1.2},
            zorder=3,
        )
    for m in panel.marks:
        marker, meaning, size = MARKERS[m.meaning]
        if marker:
            ax.plot(m.x, lines[m.lane], marker, color=TIMELINE[meaning], ms=size, zorder=4)


def add_legend(fig: Figure, timeline: Timeline, width: float, renderer: object) -> object:
    """What each colour means, in as many columns as fit the figure's width."""
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Patch

    handles: dict[str, Patch] = {}
    for panel in timeline.panels:
        for item in [*panel.spans, *panel.bars]:
            if item.legend and item.legend not in handles:
                colour = TIMELINE.get(item.meaning, NEUTRAL)
                edge = getattr(item, "edge", None)
                handles[item.legend] = Patch(
                    facecolor=to_rgba(colour, 0.6),
                    edgecolor=TIMELINE[edge] if edge else colour,
                    hatch=item.hatch,
                    label=item.legend,
                )
    if not handles:
        return None
    for ncol in range(min(3, len(handles)), 0, -1):
        legend = fig.legend(
            handles=list(handles.values()), loc="lower center", ncol=ncol, fontsize=FONT
        )
        if ncol == 1 or legend.get_window_extent(renderer).width <= width - 2 * PAD_PX:
            return legend
        legend.remove()
    return None
