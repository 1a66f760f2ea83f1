"""Lesson 5 · The unknown outcome (notebooks/05_the_unknown_outcome.ipynb): its checked
exercises on the remote call. Each check runs real calls against a real ticket service in its
own process, with real kills and timeouts, and reads back both sides.

    lesson5.predict_tickets.check(tickets_after)   # .hint(), .solution()
    lesson5.recover_unknown.check(recover)
    lesson5.idempotent_consumer.check(consume)
"""

from __future__ import annotations

from collections.abc import Callable

from labkit.studies.outbox.consumer import READER_FILE as CONSUMER_FILE
from labkit.studies.outbox.experiment import YOURS, OutboxResult, OutboxSpec, execute_outbox
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
    judge_predictions,
    no_verdict,
    source_of,
    worker_error,
)

__all__ = ["idempotent_consumer", "predict_tickets", "recover_unknown"]

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
        error = worker_error(result.recovery, source, LEARNER_FILE)
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


# --- the outbox: make the consumer idempotent ----------------------------------------------

CONSUMER_STARTER = """def consume(db, subscriber, message_id, payload):
    # db: a connection to consumer.db, inside the transaction this delivery commits in.
    # Tables: effects(message_id, payload) and inbox(subscriber, message_id),
    #         the inbox with UNIQUE(subscriber, message_id).
    db.execute("INSERT INTO effects(message_id, payload) VALUES(?, ?)", (message_id, payload))
"""


def effects(result: OutboxResult) -> list[str]:
    """The message id of every effect row, as the file holds it after recovery."""
    return [row[1] for row in result.after.table("effects").rows]


def run_outbox_case(source: str, name: str, **plan: object) -> OutboxResult:
    """One real outbox run with the reader's consumer; their error, if any, as theirs."""
    spec = OutboxSpec(YOURS, consumer_source=source, consumer_name=name, **plan)
    result = execute_outbox(spec)
    consumers = [w for w in result.workers.values() if "consumer" in w.role]
    error = next(
        (e for w in consumers if (e := worker_error(w, source, CONSUMER_FILE, (0, -9)))), None
    )
    if error:
        raise ReaderCodeError(error, str(result.run_dir))
    return result


def judge_consumer(answer: Callable | str) -> Verdict:
    """A redelivery after a kill must change nothing; two messages must both take effect."""
    source, name = source_of(answer)
    redelivered = run_outbox_case(source, name, kill_at="after_deliver")
    if redelivered.failure:
        return no_verdict("the run with a kill", redelivered.failure, str(redelivered.run_dir))
    seen = effects(redelivered)
    if len(seen) != 1:
        return Verdict(
            "incorrect",
            f"the relay was killed after delivering the message and before marking it sent; a "
            f"fresh relay delivered it again ({redelivered.deliveries} deliveries in all), and "
            f"consumer.db holds {len(seen)} effect rows for it, not 1",
            str(redelivered.run_dir),
        )
    two = run_outbox_case(source, name, orders=2)
    if two.failure:
        return no_verdict("the run with two orders", two.failure, str(two.run_dir))
    messages = [row[1] for row in two.after.table("outbox").rows]
    if sorted(effects(two)) != sorted(messages):
        return Verdict(
            "incorrect",
            f"the redelivery was handled, but two different messages ({', '.join(messages)}), "
            f"each delivered once, left {len(effects(two))} effect rows, not one each: "
            "what does your consumer recognise a message by?",
            str(two.run_dir),
        )
    return Verdict(
        "correct",
        "the redelivery after the kill left one effect, and two messages left one each",
        str(redelivered.run_dir),
    )


idempotent_consumer = Exercise(
    name="lesson5.idempotent_consumer",
    solution_file="05_idempotent_consumer.py",
    starter=CONSUMER_STARTER,
    judge=judge_consumer,
    code=True,
    hints=[
        "The relay may deliver the same message twice; the message id is the same both times.",
        "Before the effect, note (subscriber, message_id) in the inbox; its UNIQUE constraint "
        "tells you whether the message was there already.",
        "INSERT OR IGNORE INTO inbox(...) and then look at the cursor's rowcount: 1 means new, "
        "0 means a redelivery, so skip the effect. Both statements are in one transaction.",
    ],
)
