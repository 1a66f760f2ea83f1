"""A reader's choice for one race, checked and frozen: how a worker claims, how long the first
worker is frozen, how long a lease lasts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from labkit.bench.errors import (
    MAX_TIMEOUT,
    check_bool,
    check_choice,
    check_folder,
    check_instance,
    check_int,
    check_number,
    refusal,
)
from labkit.language import Messages

__all__ = ["MAX_MS", "METHODS", "STOP_POINTS", "ClaimSpec"]

# How a worker claims the task: codes, each with its meaning in the reader's language (leases.toml)
METHODS = Messages(
    "leases.methods",
    ("select_then_update", "conditional_update", "lease", "lease_with_fence", "renew_by_name"),
)
FENCED = ("lease_with_fence",)  # the methods whose receiver checks the token
LEASED = ("lease", "lease_with_fence", "renew_by_name")
# Where the first worker is frozen: after it read the state (select_then_update), else after
# its claim committed, before its write.
STOP_POINTS = {method: "claimed" for method in METHODS} | {"select_then_update": "checked"}
MAX_MS = 60_000  # lab milliseconds: a minute of the lab's clock is more than any lesson needs
SAME_NAME = "worker-a"
MAX_WRITES = 3


@dataclass(frozen=True)
class ClaimSpec:
    """One race. Invalid values raise LabError naming the valid choices."""

    method: str = "lease_with_fence"
    pause_ms: int = 300  # how long (lab time) the first worker stays frozen
    lease_ms: int = 200  # how long a claim's lease lasts (lab time)
    out: Path | None = None  # a folder that must not exist yet; None: a new one in the runs home
    timeout: float = 10.0  # seconds each worker may take before the parent kills it
    claim_source: str | None = None  # a reader's claim function (an exercise)
    receive_source: str | None = None  # a reader's receiver function (an exercise)
    same_name: bool = False  # both workers under one name, as a restarted worker comes back
    writes: int = 1  # how often each worker writes its report under its token (2: a correction)
    arrives_ms: int | None = None  # when the second worker comes; None: as `arrival_ms` says

    def __post_init__(self) -> None:
        check_choice("claim method", self.method, METHODS)
        check_int("pause_ms", self.pause_ms, 0, MAX_MS)
        check_int("lease_ms", self.lease_ms, 1, MAX_MS)
        check_folder("out", self.out)
        check_number("timeout", self.timeout, 0, MAX_TIMEOUT)
        check_bool("same_name", self.same_name)
        check_int("writes", self.writes, 1, MAX_WRITES)
        if self.arrives_ms is not None:  # the lab's clock moves on to it, then to the pause
            check_int("arrives_ms", self.arrives_ms, 0, self.pause_ms)
        for what in ("claim_source", "receive_source"):
            check_instance(what, getattr(self, what), str | None, "source_or_none")
        if self.claim_source and self.method not in LEASED:
            raise refusal("claim_needs_lease", methods=", ".join(LEASED))

    @property
    def names(self) -> dict[str, str]:
        """Each worker's name: its role, or one name for both (renew_by_name's replacement
        comes back under the stalled worker's name)."""
        same = self.same_name or self.method == "renew_by_name"
        return {role: SAME_NAME if same else role for role in ("w1", "w2")}

    @property
    def fenced(self) -> bool:
        return self.method in FENCED

    @property
    def leased(self) -> bool:
        return self.method in LEASED

    @property
    def label(self) -> str:
        """`lease_with_fence.p300.l200`: a trial's folder in a sweep."""
        return f"{self.method}.p{self.pause_ms}.l{self.lease_ms}"

    @property
    def arrival_ms(self) -> int:
        """When the second worker tries to claim: `arrives_ms` if given (an exercise's check
        comes just before a lease ends); else the moment the first one's lease runs out, if it
        does while the first is frozen; otherwise halfway through the pause."""
        if self.arrives_ms is not None:
            return self.arrives_ms
        if self.leased and self.pause_ms >= self.lease_ms:
            return self.lease_ms
        return self.pause_ms // 2
