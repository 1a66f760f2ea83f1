"""Figures reach the reader as pictures: PNG bytes, for an ipywidgets Image or IPython's Image,
so a plot or a timeline looks the same whatever matplotlib backend the kernel has.

Every figure is made by `new_figure`, which first gives matplotlib a font for Chinese: Noto
Sans CJK, from a pinned package, as the fallback behind matplotlib's own DejaVu Sans. Latin
text looks as it always did; 提交窗口 is drawn instead of empty boxes, in either language.
"""

from __future__ import annotations

import io
import logging
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn, not here
    import ipywidgets
    from matplotlib.figure import Figure

__all__ = ["CJK_FAMILY", "figure_png", "new_figure", "picture", "show_picture"]

DPI = 80  # sharp enough on a projector, small enough to send on every click
CJK_FAMILY = "Noto Sans CJK SC"  # the simplified-Chinese face of the collection


def new_figure(figsize: tuple[float, float]) -> Figure:
    """A matplotlib Figure (no pyplot, no global figure list) that can draw Chinese."""
    from matplotlib.figure import Figure

    add_cjk_fallback()
    return Figure(figsize=figsize)


@cache
def add_cjk_fallback() -> None:
    """Register the CJK font once (25 ms) and put it behind the families in use, where
    matplotlib looks for a glyph the first family lacks."""
    import matplotlib
    import noto_cjk_sans_otc
    from matplotlib import font_manager

    font_manager.fontManager.addfont(str(noto_cjk_sans_otc.FONT_PATH))
    logging.getLogger("matplotlib.font_manager").addFilter(regular_weight_is_meant)
    families = [f for f in matplotlib.rcParams["font.family"] if f != CJK_FAMILY]
    matplotlib.rcParams["font.family"] = [*families, CJK_FAMILY]


def regular_weight_is_meant(record: logging.LogRecord) -> bool:
    """The collection has one weight: bold Chinese is drawn in the regular face, on purpose,
    so matplotlib's "Failed to find font weight bold" for it is not shown under a cell."""
    return not (record.getMessage().startswith("findfont") and CJK_FAMILY in record.getMessage())


def figure_png(figure: Figure) -> bytes:
    """The figure as PNG bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


def picture(css_class: str | None = None) -> ipywidgets.Image:
    """A panel's place for a picture, hidden until it holds one: an image with no picture yet
    is a broken-image icon in a browser."""
    import ipywidgets

    image = ipywidgets.Image(format="png", layout=ipywidgets.Layout(display="none"))
    if css_class:
        image.add_class(css_class)
    return image


def show_picture(image: ipywidgets.Image, figure: Figure) -> None:
    """Put the figure in the panel's picture, and show it."""
    image.value = figure_png(figure)
    image.layout.display = None
