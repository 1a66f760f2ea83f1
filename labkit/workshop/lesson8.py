"""Lesson 8 · Retries and drains (notebooks/08_retries_and_drains.ipynb): its checked exercises.
Each check runs real graphs in workers forked from labkit's trial server and reads back the
payment service's rows, the ledger and the exit codes: the kernel never imports LangGraph.

    lesson8.charge_once.check(charge_plan)   # .hint(), .solution()
    lesson8.drain_safe.check(serve)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from labkit.bench.launcher import WorkerReport
from labkit.studies.retries.experiment import run_drain, run_retry
from labkit.studies.retries.spec import FAILURES, KEYS, POLICIES, SERVE_FILE
from labkit.workshop.checks import (
    Exercise,
    ReaderCodeError,
    Verdict,
    is_open,
    no_verdict,
    source_of,
    word,
    worker_error,
)

__all__ = ["charge_once", "drain_safe"]

PLAN_PARTS = {"policy": POLICIES, "key": KEYS}
# The payment node's trouble the check puts every plan through, in this order.
SCENARIOS = ("reset", "timeout", "declined")


def read_plan(plan: object) -> dict[str, str] | Verdict:
    """The plan's two words, or a Verdict about its form (nothing runs for a malformed one)."""
    if not isinstance(plan, Mapping) or set(plan) != set(PLAN_PARTS):
        return Verdict("incorrect", 'give a dict with two parts: {"policy": ..., "key": ...}')
    still_open = [part for part in PLAN_PARTS if is_open(plan[part])]
    if still_open:
        return Verdict("incomplete", f"still open: {', '.join(still_open)}; nothing was run yet")
    chosen = {part: word(plan[part]) for part in PLAN_PARTS}
    for part, choices in PLAN_PARTS.items():
        if chosen[part] not in choices:
            return Verdict(
                "incorrect",
                f"{plan[part]!r} is not a {part}; choose one of: {', '.join(choices)}",
            )
    return chosen


def what_went_wrong(failure: str, result: dict) -> str | None:
    """Why this scenario's run is wrong for a shop, or None: each order charged once (or, for a
    declined card, tried once and not charged)."""
    said = f"when {FAILURES[failure]}"
    orders = sorted(result["orders"], key=lambda o: o["outcome"] != "never charged")
    for order in orders:  # a charge that is another order's first: its key is the bug
        name, outcome = order["order"], order["outcome"]
        if failure == "declined":
            if order["attempts"] > 1:
                return (
                    f"{said}: the declined card of {name} was tried {order['attempts']} times; a "
                    "decline is an answer, not a fault, and each retry is another decline notice"
                )
        elif outcome == "never charged":
            return (
                f"{said}: {name} ended with receipt #{order['receipt']}, which is another "
                f"order's charge: its key {order['keys'][0]!r} was not its own"
            )
        elif outcome == "duplicate":
            keys = ", ".join(k for k in order["keys"])
            return (
                f"{said}: {name} was charged {order['new_charges']} times, under the keys {keys}: "
                "the payment service cannot tell a retry from a new payment"
            )
        elif outcome == "charged, run failed":
            return (
                f"{said}: {name} was charged, and then the run failed ({order['error']}) "
                "without a retry: the shop thinks the payment failed"
            )
    return None


def judge_plan(plan: object) -> Verdict:
    """Each scenario with two orders through the real payment node, under the reader's plan."""
    chosen = read_plan(plan)
    if isinstance(chosen, Verdict):
        return chosen
    first_dir = None
    for failure in SCENARIOS:
        result = run_retry(chosen["policy"], chosen["key"], failure)
        first_dir = first_dir or result["run_dir"]
        if result["failure"]:
            return no_verdict(f"the run with {failure}", result["failure"], result["run_dir"])
        wrong = what_went_wrong(failure, result)
        if wrong:
            return Verdict("incorrect", wrong, result["run_dir"])
    return Verdict(
        "correct",
        "a reset and a timed-out reply were retried and each order was charged once; a "
        "declined card was tried once",
        first_dir,
    )


charge_once = Exercise(
    "lesson8.charge_once",
    "08_charge_once.py",
    starter='charge_plan = {"policy": "???", "key": "???"}',
    judge=judge_plan,
    hints=[
        "The check charges two orders three times over: the connection is reset after the "
        "charge, the reply times out after the charge, and the card is declined.",
        "Print lk.default_retry_table(): which of ConnectionResetError, TimeoutError and "
        "CardDeclined does RetryPolicy() retry? Which should it?",
        "node_attempt changes on every retry and restarts after a crash; the order's own id is "
        "the same every time, and only its own.",
    ],
)


# --- make a graph drain-safe -----------------------------------------------------------------

SERVE_STARTER = """def serve(graph, inputs, config):
    # Runs in the worker. An orchestrator sends SIGTERM, waits a grace period, then SIGKILL.
    return graph.invoke(inputs, config)"""
WORK_MS, GRACE = 400, 0.8  # each node's work; SIGTERM to SIGKILL: less than the three left


def first_worker(result: dict) -> WorkerReport:
    return WorkerReport(**result["first_worker"])


def drained_wrongly(result: dict) -> str | None:
    """Why this stop was not a drain, in the lesson's terms, or None if it was one."""
    first, resume = " ".join(result["ran"]["first"]), " ".join(result["ran"]["resume"])
    ran = f"the first process ran {first or 'nothing'}, the resumed one {resume or 'nothing'}"
    ended, twice = result["ended"], " and ".join(result["rerun_nodes"])
    if ended == "terminated by SIGTERM":
        return f"SIGTERM ended the worker at once, inside b: {ran}; {twice} ran twice"
    if ended == "killed after the grace period":
        return (
            f"the worker still ran when the grace period ({GRACE} s) was over, and was "
            f"SIGKILLed: {ran}; {twice} ran twice"
        )
    if ended == "no stop":
        return f"the first process ended before b started, with nothing asked of it: {ran}"
    if result["rerun_nodes"]:
        return f"the worker exited before b's result was saved: {ran}; {twice} ran twice"
    if result["first_exit"] != 0:
        return f"the first process ended with status {result['first_exit']}: {ran}"
    return None


def judge_serve(answer: Callable | str) -> Verdict:
    """SIGTERM while b works, a grace period shorter than what is left, then a fresh resume."""
    source, _ = source_of(answer)
    result = run_drain("term", grace=GRACE, work_ms=WORK_MS, serve_source=source)
    stderr = result["first_worker"]["stderr"].strip().splitlines()
    if stderr and "GraphDrained" in stderr[-1]:
        return Verdict(
            "incorrect",
            "the run drained and b was saved, but GraphDrained escaped serve: the worker exited "
            f"with status {result['first_exit']}, a failed run to its orchestrator",
            result["run_dir"],
        )
    exits_on_purpose = bool(stderr) and stderr[-1].startswith("SystemExit")  # sys.exit()
    error = worker_error(first_worker(result), source, SERVE_FILE, planned=(0, -9, -15))
    if error and not exits_on_purpose:
        raise ReaderCodeError(error, result["run_dir"])
    if result["failure"]:
        return no_verdict("the run with SIGTERM", result["failure"], result["run_dir"])
    wrong = drained_wrongly(result)
    if wrong:
        return Verdict("incorrect", wrong, result["run_dir"])
    return Verdict(
        "correct",
        "SIGTERM drained the run after b, the worker exited 0 within the grace period, and "
        "the fresh process ran c and d: every node once",
        result["run_dir"],
    )


drain_safe = Exercise(
    "lesson8.drain_safe",
    "08_drain_safe.py",
    starter=SERVE_STARTER,
    judge=judge_serve,
    code=True,
    hints=[
        "The check sends SIGTERM while node b works, waits 0.8 s, then SIGKILLs; each node "
        "works 0.4 s. What runs is saved only at a step boundary.",
        "langgraph.runtime.RunControl has request_drain(); give one to invoke(control=...) and "
        "call it from a SIGTERM handler (signal.signal). Import inside the function: only its "
        "own source runs in the worker.",
        "A drained run raises langgraph.errors.GraphDrained from invoke: it is saved and will "
        "be resumed, so catch it and return normally.",
    ],
)
