"""A reader's choice for one call, checked and frozen: how the caller recovers, what goes wrong."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from labkit.bench.errors import check_choice, check_folder, check_number, described, refusal
from labkit.language import Messages

__all__ = ["FAULTS", "MAX_TIMEOUT", "STRATEGIES", "CallSpec"]

# How the caller recovers, and what goes wrong: codes, each with its meaning in the reader's
# language (unknown_outcome.toml)
STRATEGIES = Messages("unknown_outcome.strategies", ("new_key", "same_key", "reconcile", "give_up"))
FAULTS = Messages(
    "unknown_outcome.faults",
    ("none", "caller_killed", "service_killed", "reply_lost", "still_working"),
)
MAX_TIMEOUT = 60.0  # seconds the caller waits for a reply; more than any lesson needs
CUSTOM = "custom"  # a reader's own recovery (the exercises), given as its source


@dataclass(frozen=True)
class CallSpec:
    """One call and its recovery. Invalid values raise LabError naming the valid choices."""

    strategy: str = "reconcile"
    fault: str = "reply_lost"
    timeout: float = 0.2  # seconds the caller waits for the service's reply
    out: Path | None = None  # a folder that must not exist yet; None: a new temporary folder
    recover_source: str | None = None  # a reader's recovery function (strategy "custom")

    def __post_init__(self) -> None:
        if (self.strategy == CUSTOM) != (self.recover_source is not None):
            raise refusal("custom_strategy")
        if self.recover_source is None:
            check_choice("strategy", self.strategy, STRATEGIES)
        elif not isinstance(self.recover_source, str):
            raise refusal(
                "source_form", what="recover_source", value=described(self.recover_source)
            )
        check_choice("fault", self.fault, FAULTS)
        check_number("timeout", self.timeout, 0, MAX_TIMEOUT)
        check_folder("out", self.out)

    @property
    def label(self) -> str:
        """`reconcile.reply_lost`: the trial's folder in a sweep, and its tenant at the service."""
        return f"{self.strategy}.{self.fault}"
