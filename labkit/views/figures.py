"""Figures reach the reader as pictures: PNG bytes, for an ipywidgets Image or IPython's Image,
so a plot or a timeline looks the same whatever matplotlib backend the kernel has."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn, not here
    from matplotlib.figure import Figure

__all__ = ["figure_png"]

DPI = 80  # sharp enough on a projector, small enough to send on every click


def figure_png(figure: Figure) -> bytes:
    """The figure as PNG bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()
