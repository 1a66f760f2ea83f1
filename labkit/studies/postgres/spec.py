"""Lesson 7's choices, checked and frozen, and what each run found.

Three experiments on a real Postgres: the commit window (a business row and a checkpoint,
in two transactions or in one, the worker killed between them); the race that BEGIN
IMMEDIATE settles in SQLite (two workers run the step at once: what stops the second?); and
the database's own crash (the server SIGKILLed while a commit is at a chosen point).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from labkit.bench.errors import check_choice, described, refusal
from labkit.studies.postgres.outcome import OUTCOMES, outcome_of

__all__ = [
    "CRASH_POINTS",
    "LEARNER_FILE",
    "LOCKS",
    "NO_REPLY",
    "NO_KILL",
    "OUTCOMES",
    "READ_POINT",
    "WINDOW_ORDERS",
    "CrashResult",
    "CrashSpec",
    "RaceResult",
    "RaceSpec",
    "WindowResult",
    "WindowSpec",
    "outcome_of",
]

NO_KILL = "none"
LEARNER_FILE = "<your step>"  # a reader's step's file name in a traceback (the judge finds it)
# A reader's step's gate points: before and after each COMMIT (kill points), and after each
# statement that read rows, as the READ_POINT and its number (a race holds the first worker
# there too: a lock both workers can take, FOR SHARE, lets both read done=0 before either writes).
READ_POINT = "after read"
# Each order's kill points, in the order a run passes them. What each order, lock and crash
# point means is the reader's to read, in their language: the catalogue's postgres.window_order,
# postgres.lock and postgres_panel.crash_point (this module is a worker's, which says nothing).
WINDOW_ORDERS = {
    "effect_first": ("effect", "checkpoint"),
    "checkpoint_first": ("checkpoint", "effect"),
    "one_transaction": ("locked", "in_transaction", "committed"),
}
# What stops a second worker that runs the same step at the same time (BEGIN IMMEDIATE in SQLite).
LOCKS = ("none", "for_update", "serializable")
# Where the client's last transaction stands when the server is SIGKILLed.
CRASH_POINTS = ("before_commit", "commit_in_flight", "commit_flushed", "after_commit")
NO_REPLY = "no_reply"  # what the client saw when it was paused as the server died: no answer


@dataclass(frozen=True)
class WindowSpec:
    """One commit-window run on Postgres: a write order and where the worker is SIGKILLed."""

    order: str = "effect_first"
    kill_at: str = "effect"
    step_source: str | None = None  # a reader's own step (lesson 7's exercise), as source

    def __post_init__(self) -> None:
        if self.step_source is not None and not isinstance(self.step_source, str):
            raise refusal("must_be_str", what="step_source", value=described(self.step_source))
        if self.step_source is None:
            check_choice("write order", self.order, WINDOW_ORDERS)
            points = WINDOW_ORDERS[self.order]
            check_choice("kill point", self.kill_at, (*points, NO_KILL), of=self.order)
        elif not isinstance(self.kill_at, str):
            raise refusal("must_be_str", what="kill_at", value=described(self.kill_at))

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class RaceSpec:
    """Two workers run the one-transaction step at once; `lock` is what should stop the second.
    The first is held at its point `hold` while the second runs (None: inside its transaction,
    its writes made: "in_transaction", or a reader's step's "before commit 1")."""

    lock: str = "for_update"
    step_source: str | None = None
    hold: str | None = None

    def __post_init__(self) -> None:
        if self.step_source is None:
            check_choice("lock", self.lock, LOCKS)
        elif not isinstance(self.step_source, str):
            raise refusal("must_be_str", what="step_source", value=described(self.step_source))
        if self.hold is None:
            return
        if self.step_source is None:
            points = WINDOW_ORDERS["one_transaction"]
            check_choice("kill point", self.hold, points, of="one_transaction")
        elif not isinstance(self.hold, str):
            raise refusal("must_be_str", what="hold", value=described(self.hold))

    def held_at(self) -> str:
        """The point the first worker is held at."""
        if self.hold is not None:
            return self.hold
        return "before commit 1" if self.step_source else "in_transaction"

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class CrashSpec:
    """SIGKILL the Postgres server itself while the client's third order is at `point`."""

    point: str = "commit_in_flight"

    def __post_init__(self) -> None:
        check_choice("crash point", self.point, CRASH_POINTS)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class WindowResult:
    """What a commit-window run left in Postgres, at the kill and after recovery."""

    spec: WindowSpec
    run_dir: str
    schema: str
    before: dict  # {"done": 0|1, "receipts": n} as the kill left them
    after: dict
    outcome: str  # consistent, duplicate, lost, or "failed"
    first_exit: int | None
    recovery_exit: int | None
    events: list[dict] = field(default_factory=list)  # the trace, for the timeline
    failure: dict | None = None
    other_receipts: list[list] = field(default_factory=list)  # after recovery: not KEY, PAYLOAD

    def to_json(self) -> dict:
        return {**asdict(self), "spec": self.spec.to_json()}

    @classmethod
    def from_json(cls, data: dict) -> WindowResult:
        return cls(**{**data, "spec": WindowSpec(**data["spec"])})


@dataclass
class RaceResult:
    """Two workers on one step at once: what each saw and how many receipts are left."""

    spec: RaceSpec
    run_dir: str
    schema: str
    second_waited: bool  # Postgres showed the second blocked on a lock the first held
    reports: dict  # role → what the worker did, as codes in order (runs.what_it_did)
    receipts: int
    done: int
    outcome: str
    failure: dict | None = None

    def to_json(self) -> dict:
        return {**asdict(self), "spec": self.spec.to_json()}

    @classmethod
    def from_json(cls, data: dict) -> RaceResult:
        return cls(**{**data, "spec": RaceSpec(**data["spec"])})


@dataclass
class CrashResult:
    """A server SIGKILLed mid-commit, restarted: what the client saw, what survived."""

    spec: CrashSpec
    run_dir: str
    committed_before: list[str]  # orders the client had committed (and heard so) before
    in_flight: str  # the order whose commit was at the crash point
    seen_in_flight: dict  # pg_stat_activity's row for the client at the crash (the gate's proof)
    # what the client's COMMIT returned: "committed", NO_REPLY, or "error: " and Postgres's words
    client_saw: str
    killed: list[int]  # the server's processes, SIGKILLed at once
    survived: list[str]  # the orders the restarted server holds
    recovery_log: list[str]  # the restarted server's own lines about its WAL replay
    restart_seconds: float
    failure: dict | None = None

    @property
    def in_flight_survived(self) -> bool:
        return self.in_flight in self.survived

    def to_json(self) -> dict:
        return {**asdict(self), "spec": self.spec.to_json()}

    @classmethod
    def from_json(cls, data: dict) -> CrashResult:
        return cls(**{**data, "spec": CrashSpec(**data["spec"])})
