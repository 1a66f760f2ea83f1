"""What lesson 8's files show, in words: per order, per refund, per stopped run.

Standard library only: the trial server computes these from the ledger and the payment
service's rows, and the views and the exercises read them back.
"""

from __future__ import annotations

__all__ = ["ORDER_OUTCOMES", "order_outcome"]

# An order's words (codes: the views show them in the reader's language, with their meanings).
ORDER_OUTCOMES = (
    "charged_once",
    "duplicate",
    "charged_run_failed",
    "never_charged",
    "declined",
    "failed",
)


def order_outcome(new_charges: int, receipt: int | None, error: str | None) -> str:
    """One order's word from its new charges and how its run ended."""
    if new_charges > 1:
        return "duplicate"
    if new_charges == 1:
        return "charged_run_failed" if error else "charged_once"
    if error:
        return "declined" if error.startswith("CardDeclined") else "failed"
    return "never_charged" if receipt is not None else "failed"
