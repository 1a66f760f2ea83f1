"""Okabe-Ito colours (safe for colour-blind readers); an outcome always comes with its word too."""

from __future__ import annotations

__all__ = ["OUTCOME_COLOURS", "outcome_colour"]

OUTCOME_COLOURS = {
    "consistent": "#009E73",  # bluish green
    "duplicate": "#D55E00",  # vermillion
    "lost": "#0072B2",  # blue
    "unfinished": "#E69F00",  # orange
    "recovery_failed": "#CC79A7",  # reddish purple
}
FILE_COLOURS = {"control.db": "#56B4E9", "effect.db": "#E69F00"}  # sky blue, orange
NEUTRAL = "#999999"


def outcome_colour(outcome: str) -> str:
    return OUTCOME_COLOURS.get(outcome, NEUTRAL)
