"""Lesson 5 · The unknown outcome (notebooks/05_the_unknown_outcome.ipynb): its checked
exercises on the remote call. Each check runs real calls against a real ticket service in its
own process, with real kills and timeouts, and reads back both sides.

    lesson5.predict_tickets.check(tickets_after)   # .hint(), .solution()
    lesson5.recover_unknown.check(recover)
"""

from __future__ import annotations

import re
from collections.abc import Callable

from labkit.bench.launcher import WorkerReport
from labkit.studies.unknown_outcome.caller import LEARNER_FILE
from labkit.studies.unknown_outcome.experiment import CallResult, run_specs
from labkit.studies.unknown_outcome.outcome import OUTCOMES
from labkit.studies.unknown_outcome.spec import FAULTS, STRATEGIES, CallSpec
from labkit.workshop.checks import (
    WHOLE_NUMBER,
    Exercise,
    Measured,
    ReaderCodeError,
    Verdict,
    code_error,
    judge_predictions,
    no_verdict,
    source_of,
)

__all__ = ["predict_tickets", "recover_unknown"]

PREDICTED_FAULT = "reply_lost"
CRASHES = tuple(fault for fault in FAULTS if fault != "none")  # each leaves the outcome unknown


def measure_tickets(strategies: list[str]) -> dict[str, Measured]:
    """Each strategy's tickets after a lost reply and a recovery: real calls, one service."""
    results = run_specs([CallSpec(strategy, PREDICTED_FAULT) for strategy in strategies])
    return {
        r.spec.strategy: Measured(
            len(r.tickets),
            f"Jepsen {' → '.join(op['type'] for op in r.ops)}, the checkpoint says {r.status}",
            str(r.run_dir),
            r.failure,
        )
        for r in results
    }


def judge_tickets(predicted: object) -> Verdict:
    return judge_predictions(predicted, STRATEGIES, measure_tickets, WHOLE_NUMBER)


READER_FRAME = re.compile(rf'File "{re.escape(LEARNER_FILE)}", line (\d+)')


def raised(worker: WorkerReport, source: str) -> str | None:
    """The reader's error if the recovering caller died of it, with their line."""
    if worker.exit_code == 0 and not worker.timed_out:
        return None
    if worker.timed_out:
        return "your recovery did not finish in time (an endless loop?)"
    lines = worker.stderr.strip().splitlines() or [f"exit status {worker.exit_code}"]
    frames = READER_FRAME.findall(worker.stderr)
    error = code_error(lines[-1], int(frames[-1]) if frames else None, source)
    if lines[-1].startswith("NameError"):
        error += " (only the function's own source runs in the recovering caller)"
    return error


def what_went_wrong(result: CallResult) -> str | None:
    """Why this run's end is wrong for the workflow, or None: one ticket, and the checkpoint
    holds that ticket as done."""
    if result.outcome != "unknown-resolved":
        held = f"{len(result.tickets)} ticket{'s' * (len(result.tickets) != 1)}"
        return (
            f"{held} at the service and the checkpoint says {result.status}: "
            f"{result.outcome} ({OUTCOMES[result.outcome]})"
        )
    recorded, held = result.checkpoint[0][3], result.tickets[0][0]
    if recorded != held:
        return f"the workflow recorded ticket {recorded!r}, but the service holds #{held}"
    return None


def run_recovery(source: str) -> list[CallResult]:
    """The reader's recovery after every fault that leaves the outcome unknown."""
    return run_specs([CallSpec("custom", fault, recover_source=source) for fault in CRASHES])


def judge_recovery(answer: Callable | str) -> Verdict:
    """Run the reader's recovery after each fault; each must end with one ticket, recorded."""
    source, _ = source_of(answer)
    results = run_recovery(source)
    for result in results:
        error = raised(result.recovery, source)
        if error:
            raise ReaderCodeError(error, str(result.run_dir))
        if result.failure:
            return no_verdict(f"the run with {result.spec.fault}", result.failure, result.run_dir)
    for result in results:
        wrong = what_went_wrong(result)
        if wrong:
            fault = result.spec.fault
            return Verdict(
                "incorrect", f"after {fault} ({FAULTS[fault]}): {wrong}", str(result.run_dir)
            )
    return Verdict(
        "correct",
        f"after each of {', '.join(CRASHES)}: one ticket, and the workflow recorded it",
        str(results[0].run_dir),
    )


predict_tickets = Exercise(
    "lesson5.predict_tickets",
    "05_predict_tickets.py",
    starter="""tickets_after = {
    "new_key": None,
    "same_key": None,
    "reconcile": None,
    "give_up": None,
}""",
    judge=judge_tickets,
    hints=[
        "reply_lost: the service committed the ticket, then its reply came after the caller "
        "had given up. Start every count at the ticket that already exists.",
        "A key the service has never seen is a new operation to it, whatever the payload.",
        "Giving up and looking up make no ticket; a retry under the same key gets the "
        "original back.",
    ],
)

recover_unknown = Exercise(
    "lesson5.recover_unknown",
    "05_recover_unknown.py",
    starter="""def recover(intent, service):
    # intent: op_key, title, status ("unknown"), ticket; service: lookup(key), create(key, title)
    # return the ticket id the workflow should record, or None to mark the call failed
    return service.create(intent["op_key"] + ":retry", intent["title"])""",
    judge=judge_recovery,
    code=True,
    hints=[
        "The check runs your recovery after a killed caller, a killed service, a lost reply "
        "and a service still working when the caller gave up: it must leave one ticket, "
        "recorded in the checkpoint, every time.",
        "A timeout is not a failure: the ticket may exist already, or be on its way. A new "
        "key, or None, turns that into a second ticket or an orphan.",
        "Ask the service by the intent's own key (service.lookup) and, only if it has "
        "nothing, create under that same key: if the first call lands later, the service "
        "returns the same ticket.",
    ],
)
