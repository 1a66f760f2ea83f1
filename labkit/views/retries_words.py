"""Lesson 8's shared words: each table's columns, the outcome words and their colours, and the
check that a result is what the lab made; every view of lesson 8 says them the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from labkit.bench.errors import check_choice, check_record
from labkit.language import say
from labkit.views.tables import headers

# Each table's columns, by their keys in the catalogue ("retries.column.<key>").
RETRY_COLUMNS = ("order", "attempts", "keys", "new_charges", "ended_with", "outcome")
ATTEMPT_COLUMNS = ("order", "node_attempt", "ledger_line", "key", "charge", "new_at_service")
DRAIN_COLUMNS = ("stopped_by", "first_process", "checkpoints", "first_ran", "resume_ran", "twice")
FIRST_COLUMNS = ("mode", "trials", "saved_nothing", "input", "input_loop", "runs_lost", "took")
FUNCTIONAL_COLUMNS = ("process", "where", "ledger_line", "order_reference")
SAVED = ("nothing", "input", "input+loop")
# How runs.stop_while_b_works says the first process ended (codes; its status is first_exit).
ENDED = ("no_stop", "killed", "killed_after_grace", "exited", "terminated_by_sigterm", "signalled")
# The palette's outcome each word is drawn in (and always written beside it).
ORDER_COLOURS = {
    "charged_once": "consistent",
    "duplicate": "duplicate",
    "never_charged": "lost",
    "charged_run_failed": "unfinished",
    "declined": "neutral",
    "failed": "failed",
}
SAVED_COLOURS = {"nothing": "lost", "input": "unfinished", "input+loop": "consistent"}


def header(columns: Sequence[str]) -> list[str]:
    """A table's columns in the reader's language."""
    return headers("retries.column", columns)


def order_word(outcome: str) -> str:
    """An order's outcome (outcome.py's code) as the reader's language says it."""
    return say(f"retries.order_word.{outcome}")


def ended_word(ended: str) -> str:
    """How the first process ended (one of ENDED), in words."""
    return say(f"retries.ended.{check_choice('ended', ended, ENDED)}")


def saved_word(saved: str) -> str:
    """What the checkpoint file held at the kill, in words (a mix SAVED does not name: as is)."""
    return say(f"retries.saved.{saved}") if saved in SAVED else saved


def short(key: str | None) -> str:
    """A key as a person reads it: a uuid4's 32 hex digits cut to 8."""
    if key is None:
        return "-"
    is_uuid = len(key) == 32 and all(c in "0123456789abcdef" for c in key)
    return key[:8] + "…" if is_uuid else key


def checked(result: object, keys: Sequence[str], made_by: str) -> Mapping:
    return check_record("result", result, keys, f"{made_by}_result")


def show(html: str) -> None:
    from labkit.views import show_html

    show_html(html)
