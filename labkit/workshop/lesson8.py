"""Lesson 8 · Retries and drains (notebooks/08_retries_and_drains.ipynb): its checked exercises.
Each check runs real graphs in workers forked from labkit's trial server and reads back the
payment service's rows, the ledger and the exit codes: the kernel never imports LangGraph.

    lesson8.charge_once.check(charge_plan)   # .hint(), .solution()
    lesson8.drain_safe.check(serve)

What the verdicts and hints say is in the catalogue, `lesson8.toml`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from labkit.bench.launcher import WorkerReport
from labkit.language import say
from labkit.studies.retries.experiment import run_drain, run_retry
from labkit.studies.retries.spec import KEYS, POLICIES, SERVE_FILE, NodeFailed
from labkit.workshop.checks import (
    Exercise,
    Verdict,
    case_name,
    check_worker,
    is_open,
    no_verdict,
    source_of,
    word,
)

__all__ = ["charge_once", "drain_safe"]

PLAN_PARTS = {"policy": POLICIES, "key": KEYS}
# The payment node's trouble the check puts every plan through, in this order.
SCENARIOS = ("reset", "timeout", "declined")


def read_plan(given: object) -> dict[str, str] | Verdict:
    """The plan's two words, or a Verdict about its form (nothing runs for a malformed one).
    Its parts are named as the reader may write them: "Policy" is "policy"."""
    given = given if isinstance(given, Mapping) else {}
    plan = {case_name(part): value for part, value in given.items()}
    if len(plan) != len(given) or set(plan) != set(PLAN_PARTS):  # one part written twice: no
        return Verdict("incorrect", say("lesson8.charge_once.give_a_dict"))
    still_open = [part for part in PLAN_PARTS if is_open(plan[part])]
    if still_open:
        said = say("lesson8.charge_once.still_open", parts=", ".join(still_open))
        return Verdict("incomplete", said)
    chosen = {part: word(plan[part]) for part in PLAN_PARTS}
    for part, choices in PLAN_PARTS.items():
        if chosen[part] not in choices:
            said = say(
                "lesson8.charge_once.not_a_part",
                given=plan[part],
                part=part,
                choices=", ".join(choices),
            )
            return Verdict("incorrect", said)
    return chosen


def what_went_wrong(failure: str, result: dict) -> str | None:
    """Why this scenario's run is wrong for a shop, or None: each order charged once (or, for a
    declined card, tried once and not charged)."""
    when = say("lesson8.charge_once.when", failure=say(f"retries.failure.{failure}"))
    orders = sorted(result["orders"], key=lambda o: o["outcome"] != "never_charged")
    for order in orders:  # a charge that is another order's first: its key is the bug
        name, outcome = order["order"], order["outcome"]
        if failure == "declined":
            if order["attempts"] > 1:
                return say(
                    "lesson8.charge_once.declined_retried",
                    when=when,
                    order=name,
                    attempts=order["attempts"],
                )
        elif outcome == "never_charged":
            return say(
                "lesson8.charge_once.not_its_own",
                when=when,
                order=name,
                receipt=order["receipt"],
                key=order["keys"][0],
            )
        elif outcome == "duplicate":
            return say(
                "lesson8.charge_once.charged_twice",
                when=when,
                order=name,
                charges=order["new_charges"],
                keys=", ".join(order["keys"]),
            )
        elif outcome == "charged_run_failed":
            return say(
                "lesson8.charge_once.run_failed", when=when, order=name, error=order["error"]
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
            run = say("checks.words.run_with", what=failure)
            return no_verdict(run, result["failure"], result["run_dir"])
        wrong = what_went_wrong(failure, result)
        if wrong:
            return Verdict("incorrect", wrong, result["run_dir"])
    return Verdict("correct", say("lesson8.charge_once.correct"), first_dir)


charge_once = Exercise(
    "lesson8.charge_once",
    "08_charge_once.py",
    starter='charge_plan = {"policy": "???", "key": "???"}',
    judge=judge_plan,
)


# --- make a graph drain-safe -----------------------------------------------------------------

SERVE_STARTER = """def serve(graph, inputs, config):
    # Runs in the worker. An orchestrator sends SIGTERM, waits a grace period, then SIGKILL.
    return graph.invoke(inputs, config)"""
WORK_MS, GRACE = 300, 0.8  # each node's work (as in the lesson); SIGTERM to SIGKILL: less
# than the three nodes left once b starts, more than b alone
SERVE_EXPECTS = "lesson8.drain_safe.expects"


def first_worker(result: dict) -> WorkerReport:
    return WorkerReport(**result["first_worker"])


def drained_wrongly(result: dict) -> str | None:
    """Why this stop was not a drain, in the lesson's terms, or None if it was one."""
    nothing = say("checks.words.nothing")
    first, resume = (" ".join(result["ran"][p]) or nothing for p in ("first", "resume"))
    ran = say("lesson8.drain_safe.ran", first=first, resume=resume)
    ended, twice = result["ended"], say("checks.words.and").join(result["rerun_nodes"])
    if ended == "terminated_by_sigterm":
        return say("lesson8.drain_safe.terminated", ran=ran, twice=twice)
    if ended == "killed_after_grace" and not twice:  # b was saved: serve itself lingered
        return say("lesson8.drain_safe.killed_serving", grace=GRACE, ran=ran)
    if ended == "killed_after_grace":
        return say("lesson8.drain_safe.killed", grace=GRACE, ran=ran, twice=twice)
    if ended == "no_stop":
        return say("lesson8.drain_safe.no_stop", ran=ran)
    if result["rerun_nodes"]:
        return say("lesson8.drain_safe.exited_early", ran=ran, twice=twice)
    if result["first_exit"] != 0:
        return say("lesson8.drain_safe.ended_with", status=result["first_exit"], ran=ran)
    return None


def judge_drain(source: str) -> Verdict:
    """SIGTERM while b works, a grace period shorter than what is left, then a fresh resume:
    correct if the run drained after b and the worker exited 0."""
    result = run_drain("term", grace=GRACE, work_ms=WORK_MS, serve_source=source)
    stderr = result["first_worker"]["stderr"].strip().splitlines()
    if stderr and "GraphDrained" in stderr[-1]:
        said = say("lesson8.drain_safe.escaped", status=result["first_exit"])
        return Verdict("incorrect", said, result["run_dir"])
    if not (stderr and stderr[-1].startswith("SystemExit")):  # sys.exit(): ended on purpose
        worker = first_worker(result)
        check_worker(worker, source, SERVE_FILE, result["run_dir"], SERVE_EXPECTS, (0, -9, -15))
    if result["failure"]:
        run = say("lesson8.drain_safe.run_with_term")
        return no_verdict(run, result["failure"], result["run_dir"])
    wrong = drained_wrongly(result)
    if wrong:
        return Verdict("incorrect", wrong, result["run_dir"])
    return Verdict("correct", say("lesson8.drain_safe.correct"), result["run_dir"])


def judge_failure(source: str) -> Verdict | None:
    """Node a fails by itself, before any stop: None if the failure reached the orchestrator
    (the worker did not exit 0, whichever way it ended), never passed off as drained."""
    result = run_drain("term", grace=GRACE, work_ms=WORK_MS, serve_source=source, fails=True)
    worker = first_worker(result)
    if worker.timed_out:
        check_worker(worker, source, SERVE_FILE, result["run_dir"], SERVE_EXPECTS)
    if result["failure"]:
        run = say("lesson8.drain_safe.run_with_failure")
        return no_verdict(run, result["failure"], result["run_dir"])
    if worker.exit_code == 0:
        said = say("lesson8.drain_safe.failure_hidden", failure=NodeFailed.__name__)
        return Verdict("incorrect", said, result["run_dir"])
    return None


def judge_serve(answer: Callable | str) -> Verdict:
    """A drain on SIGTERM, and a failure of the run's own that must not look drained."""
    source, _ = source_of(answer)
    drained = judge_drain(source)
    if drained.status != "correct":
        return drained
    hidden = judge_failure(source)
    return drained if hidden is None else hidden


drain_safe = Exercise(
    "lesson8.drain_safe",
    "08_drain_safe.py",
    starter=SERVE_STARTER,
    judge=judge_serve,
    code=True,
    hint_fields={"grace": GRACE, "work": WORK_MS / 1000},
)
