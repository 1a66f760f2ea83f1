"""The controls the lessons' panels share: a Run button, a slider that starts nothing while it
moves, a list to pick one or several of. Made in one place, so every panel looks and behaves
alike; only a panel imports this module (and ipywidgets with it)."""

from __future__ import annotations

from collections.abc import Iterable

import ipywidgets as widgets

__all__ = ["pick_many", "pick_one", "run_button", "slider"]


def run_button(label: str) -> widgets.Button:
    """The panel's primary button, with a play icon: a run starts only on its click."""
    return widgets.Button(description=label, button_style="primary", icon="play")


def slider(label: str, value: int, low: int, high: int, step: int = 1) -> widgets.IntSlider:
    """A whole-number slider that reports its value once let go, not at every step."""
    return widgets.IntSlider(
        value=value, min=low, max=high, step=step, description=label, continuous_update=False
    )


def pick_many(
    label: str, options: Iterable[str], rows: int, chosen: Iterable[str] | None = None
) -> widgets.SelectMultiple:
    """A list to pick several of; every option picked at first, unless `chosen` says which."""
    options = list(options)
    picked = options if chosen is None else list(chosen)
    return widgets.SelectMultiple(options=options, value=picked, rows=rows, description=label)


def pick_one(label: str, options: Iterable[str], value: str | None = None) -> widgets.Dropdown:
    """A drop-down list to pick one of; the first option unless `value` names another."""
    options = list(options)
    return widgets.Dropdown(
        options=options, value=options[0] if value is None else value, description=label
    )
