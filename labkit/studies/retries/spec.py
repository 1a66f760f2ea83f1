"""The reader's choices for lesson 8, checked and frozen before anything starts.

Standard library only: the kernel and the CLI build these, the trial server and its workers
read them back from JSON. Every wrong value is one LabError line that names the choices.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from labkit.bench.errors import (
    MAX_TIMEOUT,
    check_bool,
    check_choice,
    check_int,
    check_number,
    described,
    refusal,
)

__all__ = [
    "DRAIN_SIGNALS",
    "FAILURES",
    "FIRST_MODES",
    "HANDLER_WAYS",
    "KEYS",
    "MAX_FIRST_TRIALS",
    "MAX_WRITES_DELAY_MS",
    "POLICIES",
    "SERVE_FILE",
    "DrainSpec",
    "FirstCheckpointSpec",
    "FunctionalSpec",
    "HandlerSpec",
    "NodeFailed",
    "RetrySpec",
]

POLICIES = {
    "none": "no retry policy: the first error fails the run",
    "default": "RetryPolicy() with LangGraph's own retry_on (default_retry_on)",
    "every": "RetryPolicy(retry_on=Exception): every exception is retried",
    "transient": "RetryPolicy(retry_on=(ConnectionError, TimeoutError, NodeTimeoutError))",
}
KEYS = {
    "uuid4": "a new uuid4 per attempt",
    "attempt": "the order id and runtime.execution_info.node_attempt",
    "attempt_only": "runtime.execution_info.node_attempt alone",
    "order": "the order id from the state: the same on every attempt and every resume",
}
FAILURES = {
    "reset": "the charge went through, then the connection was reset (ConnectionResetError)",
    "timeout": "the charge went through, then reading the reply timed out (TimeoutError)",
    "bad_reply": "the charge went through, then the reply was not JSON (ValueError)",
    "declined": "the card is declined before any charge (CardDeclined, a plain Exception)",
}
# The node calls request_drain() itself; SIGTERM, then SIGKILL after the grace; SIGKILL alone
# (their meanings, in the reader's language: views.retries, "retries.signal.<name>").
DRAIN_SIGNALS = ("drain", "term", "kill")
HANDLER_WAYS = {
    "add_node": "add_node('refund_check', ..., error_handler=refund)",
    "defaults": "StateGraph.set_node_defaults(error_handler=refund)",
}
FIRST_MODES = ("sync", "async", "exit")
SERVE_FILE = "<your serve>"  # a reader's `serve` (DrainSpec.serve_source) in a traceback
MAX_ATTEMPTS = 10  # the lesson's backoff starts at 10 ms and doubles: 10 attempts wait 5 s
MAX_FIRST_TRIALS = 2000  # per mode: a trial takes 50-150 ms here, so at most about 5 min
MAX_WORK_MS = 10_000
MAX_WRITES_DELAY_MS = 5000  # a task's result saved this late: well inside a worker's timeout


class NodeFailed(
    ConnectionError, TimeoutError, RuntimeError, ValueError, LookupError, TypeError, ArithmeticError
):
    """A node's own failure (DrainSpec.fails): no stop asked, the run simply fails. A service
    call that failed, of every family a serve may be tempted to catch beside GraphDrained (a
    lost connection, a timeout, any error at run time, a bad value, a missing key, a wrong
    type, a failed sum; every built-in family whose layout lets one class join them all):
    none of them is a drain, so a serve that catches any of them hides a real failure."""


def check_timeout(timeout: object) -> float:
    return check_number("timeout", timeout, 0, MAX_TIMEOUT)


@dataclass(frozen=True)
class RetrySpec:
    """A payment node that fails after (or before) its charge, under a retry policy and a key.

    `fail_times` attempts of each order fail; the next one succeeds. `asynchronous` runs the
    node as an async node under TimeoutPolicy(run_timeout=...): the first attempt's reply takes
    longer than that, so it times out after its charge (the `failure` is then not raised)."""

    policy: str = "default"
    key: str = "uuid4"
    failure: str = "reset"
    fail_times: int = 1
    max_attempts: int = 3
    orders: int = 2
    asynchronous: bool = False
    timeout: float = 30.0

    def __post_init__(self) -> None:
        check_choice("retry policy", self.policy, POLICIES)
        check_choice("key", self.key, KEYS)
        check_choice("failure", self.failure, FAILURES)
        check_int("fail_times", self.fail_times, 0, MAX_ATTEMPTS)
        check_int("max_attempts", self.max_attempts, 1, MAX_ATTEMPTS)
        check_int("orders", self.orders, 1, 5)
        check_bool("asynchronous", self.asynchronous)
        check_timeout(self.timeout)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class HandlerSpec:
    """Issue #9002: a node whose error handler refunds, beside a node that fails once."""

    way: str = "add_node"
    keyed: bool = False  # the refund carries a key made from the order: a re-run adds none
    timeout: float = 30.0

    def __post_init__(self) -> None:
        check_choice("error handler way", self.way, HANDLER_WAYS)
        check_bool("keyed", self.keyed)
        check_timeout(self.timeout)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class DrainSpec:
    """Stop a running graph a → b → c → d while b works: drain, SIGTERM with a grace period,
    or SIGKILL; then resume it in a fresh process.

    Every node works `work_ms` after its start. `drain_safe`: the worker turns SIGTERM into
    `request_drain()` (else SIGTERM's default action ends it at once). `serve_source`: a
    reader's own way to run the graph in the worker (lesson 8's exercise), instead of the lab's.
    `fails`: node a raises NodeFailed in the first process, before any stop: a run that fails
    for a reason of its own, which a drain-safe worker must not pass off as drained."""

    signal: str = "term"
    grace: float = 2.0
    work_ms: int = 300
    drain_safe: bool = True
    serve_source: str | None = None
    timeout: float = 30.0
    fails: bool = False

    def __post_init__(self) -> None:
        check_choice("signal", self.signal, DRAIN_SIGNALS)
        check_number("grace", self.grace, 0, 60)
        check_int("work_ms", self.work_ms, 0, MAX_WORK_MS)
        check_bool("drain_safe", self.drain_safe)
        if self.serve_source is not None and not isinstance(self.serve_source, str):
            raise refusal("source_form", what="serve_source", value=described(self.serve_source))
        check_timeout(self.timeout)
        check_bool("fails", self.fails)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class FirstCheckpointSpec:
    """Issue #8764: `trials` runs killed at the first line of their first node, per mode; with
    a `margin`, fewer: the mode stops once its lost share is known to within it
    (`sequential.clear_enough`)."""

    mode: str = "async"
    trials: int = 200
    timeout: float = 30.0
    margin: float = 0.0  # 0: every trial; 0.1: stop at a 95 % interval of ±10 points

    def __post_init__(self) -> None:
        check_choice("durability mode", self.mode, FIRST_MODES)
        check_int("trials", self.trials, 1, MAX_FIRST_TRIALS)
        check_timeout(self.timeout)
        if not (type(self.margin) in (int, float) and self.margin == 0):  # 0: no early stop
            object.__setattr__(self, "margin", check_number("margin", self.margin, 0, 0.5))

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class FunctionalSpec:
    """The functional API killed inside its second task: where the order reference is made,
    and how long the store takes to save each task's result (a slow one: the kill waits)."""

    ref_in_task: bool = False
    writes_delay_ms: int = 0
    timeout: float = 30.0

    def __post_init__(self) -> None:
        check_bool("ref_in_task", self.ref_in_task)
        delay = check_int("writes_delay_ms", self.writes_delay_ms, 0, MAX_WRITES_DELAY_MS)
        object.__setattr__(self, "writes_delay_ms", delay)
        check_timeout(self.timeout)

    def to_json(self) -> dict:
        return asdict(self)
