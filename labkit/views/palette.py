"""Okabe-Ito colours (safe for colour-blind readers); an outcome always comes with its word too."""

from __future__ import annotations

__all__ = [
    "FILE_COLOURS",
    "KILL_COLOUR",
    "NEUTRAL",
    "OUTCOME_COLOURS",
    "WINDOW_COLOUR",
    "outcome_colour",
]

OUTCOME_COLOURS = {
    "consistent": "#009E73",  # bluish green
    "duplicate": "#D55E00",  # vermillion
    "lost": "#0072B2",  # blue
    "unfinished": "#E69F00",  # orange
    "failed": "#CC79A7",  # reddish purple: a worker failed, so no outcome is claimed
}
FILE_COLOURS = {"control.db": "#56B4E9", "effect.db": "#E69F00"}  # sky blue, orange
NEUTRAL = "#999999"
WINDOW_COLOUR = "#F0E442"  # yellow: the commit window
KILL_COLOUR = "#D55E00"  # vermillion: a kill, and the hatching of a window it left open


def outcome_colour(outcome: str) -> str:
    return OUTCOME_COLOURS.get(outcome, NEUTRAL)
