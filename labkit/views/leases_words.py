"""Lesson 6's outcome words: each outcome's name, colour and meaning, said the same way by the
race's views and the LangGraph race's."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from labkit.language import say
from labkit.language.failures import failure_text
from labkit.studies.leases.outcome import OUTCOMES
from labkit.views.palette import NEUTRAL
from labkit.views.tables import headers

COLOURS = {  # Okabe-Ito; the word always goes with the colour
    "one_winner": "#009E73",
    "both_ran": "#D55E00",
    "lost_update": "#0072B2",
    "refused_late_write": "#56B4E9",
    "nobody": "#E69F00",
    "failed": "#CC79A7",
}


def said(outcome: str) -> str:
    """An outcome code as the reader reads it: "both ran" (两个都执行了 in Chinese)."""
    return say(f"leases.name.{outcome}")


def columns(*names: str) -> list[str]:
    """The headers of CLAIM_COLUMNS (and more), in the reader's language."""
    return headers("leases.columns", names)


def legend_lines(words: Sequence[str]) -> list[str]:
    return [f"  {said(w)}: {OUTCOMES[w]}" for w in dict.fromkeys(words)]


def outcome_text(outcome: str) -> str:
    return say("leases.race.outcome", word=said(outcome).upper(), meaning=OUTCOMES[outcome])


def badge(outcome: str) -> str:
    return (
        f'<span style="background:{COLOURS.get(outcome, NEUTRAL)};color:white;padding:2px 8px;'
        f'border-radius:4px;font-weight:bold;white-space:nowrap">{escape(said(outcome).upper())}</span>'
    )


def outcome_html(outcome: str, failure: dict | str | None) -> str:
    why = ""
    if failure:
        why = (
            f"<br><b>{say('leases.race.why_html')}</b> <code>{escape(failure_text(failure))}</code>"
        )
    return f"<p>{badge(outcome)} {escape(OUTCOMES[outcome])}{why}</p>"
