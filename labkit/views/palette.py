"""Okabe-Ito colours (safe for colour-blind readers); an outcome always comes with its word too.

One palette for every lesson's timeline: a colour means the same thing wherever it is drawn
(`TIMELINE`, by meaning), and a store's transactions take the colour of what the store keeps.
"""

from __future__ import annotations

__all__ = [
    "KILL_COLOUR",
    "NEUTRAL",
    "OUTCOME_COLOURS",
    "TIMELINE",
    "WINDOW_COLOUR",
    "outcome_colour",
    "store_colour",
]

OUTCOME_COLOURS = {
    "consistent": "#009E73",  # bluish green
    "duplicate": "#D55E00",  # vermillion
    "lost": "#0072B2",  # blue
    "unfinished": "#E69F00",  # orange
    "failed": "#CC79A7",  # reddish purple: a worker failed, so no outcome is claimed
    "not_judged": "#CC79A7",  # the same: a file no checker can read differs, so none is known
}
NEUTRAL = "#999999"
WINDOW_COLOUR = "#F0E442"  # yellow: the commit window
KILL_COLOUR = "#D55E00"  # vermillion: a kill, and the hatching of a window it left open

TIMELINE = {  # a timeline's meanings, the same colour in every lesson
    "effect": "#E69F00",  # orange: a transaction on a store where the side effect lands
    "progress": "#56B4E9",  # sky blue: a transaction on a store that records progress
    "held": "#009E73",  # bluish green: it went through (a call answered ok, a lease held)
    "fail": "#0072B2",  # blue: a call answered "failed"
    "info": "#CC79A7",  # reddish purple, hatched: a call with no answer, outcome unknown
    "window": WINDOW_COLOUR,
    "kill": KILL_COLOUR,  # a kill, and anything refused
    "neutral": NEUTRAL,  # a process's life, its crash points, a pause
    "mark": "#000000",  # a commit, a write, a request
}
STORES = {  # what a store keeps: its transactions are drawn in that meaning's colour
    "effect.db": "effect",
    "consumer.db": "effect",
    "business": "effect",  # lesson 7's Postgres sessions
    "control.db": "progress",
    "checkpoints": "progress",
    "business.db": "progress",  # the outbox: what is still to be sent, and what was
}


def outcome_colour(outcome: str) -> str:
    return OUTCOME_COLOURS.get(outcome, NEUTRAL)


def store_colour(store: str) -> str:
    """A store's colour; a store of the reader's own (lesson 9) is neutral grey."""
    return TIMELINE.get(STORES.get(store, "neutral"), NEUTRAL)
