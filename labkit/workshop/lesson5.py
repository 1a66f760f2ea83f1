"""Lesson 5 · The unknown outcome (notebooks/05_the_unknown_outcome.ipynb): its checked
exercises on the remote call. Each check runs real calls against a real ticket service in its
own process, with real kills and timeouts, and reads back both sides.

    lesson5.predict_tickets.check(tickets_after)   # .hint(), .solution()
    lesson5.recover_unknown.check(recover)
    lesson5.idempotent_consumer.check(consume)

What the verdicts and hints say is in the catalogue, `lesson5.toml`.
"""

from __future__ import annotations

from collections.abc import Callable

from labkit.language import say
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
            say(
                "lesson5.predict_tickets.story",
                ops=" → ".join(op["type"] for op in r.ops),
                status=r.status,
            ),
            str(r.run_dir),
            r.failure,
        )
        for r in results
    }


def judge_tickets(predicted: object) -> Verdict:
    return judge_predictions(predicted, STRATEGIES, measure_tickets, WHOLE_NUMBER)


def tickets_held(count: int) -> str:
    """ "1 ticket", "2 tickets", in the reader's language."""
    return say(f"lesson5.recover_unknown.{'one_ticket' if count == 1 else 'tickets'}", count=count)


def what_went_wrong(result: CallResult) -> str | None:
    """Why this run's end is wrong for the workflow, or None: one ticket, and the checkpoint
    holds that ticket as done."""
    if result.outcome != "unknown-resolved":
        return say(
            "lesson5.recover_unknown.ends_wrong",
            held=tickets_held(len(result.tickets)),
            status=result.status,
            outcome=result.outcome,
            meaning=OUTCOMES[result.outcome],
        )
    recorded, held = result.checkpoint[0][3], result.tickets[0][0]
    if recorded != held:
        return say("lesson5.recover_unknown.wrong_ticket", recorded=recorded, held=held)
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
            run = say("checks.words.run_with", what=result.spec.fault)
            return no_verdict(run, result.failure, result.run_dir)
    for result in results:
        wrong = what_went_wrong(result)
        if wrong:
            fault = result.spec.fault
            said = say(
                "lesson5.recover_unknown.after_fault",
                fault=fault,
                meaning=FAULTS[fault],
                wrong=wrong,
            )
            return Verdict("incorrect", said, str(result.run_dir))
    said = say("lesson5.recover_unknown.correct", faults=", ".join(CRASHES))
    return Verdict("correct", said, str(results[0].run_dir))


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
        run = say("lesson5.idempotent_consumer.run_with_kill")
        return no_verdict(run, redelivered.failure, str(redelivered.run_dir))
    seen = effects(redelivered)
    if len(seen) != 1:
        return Verdict(
            "incorrect",
            say(
                "lesson5.idempotent_consumer.redelivered",
                deliveries=redelivered.deliveries,
                rows=len(seen),
            ),
            str(redelivered.run_dir),
        )
    two = run_outbox_case(source, name, orders=2)
    if two.failure:
        run = say("lesson5.idempotent_consumer.run_with_two")
        return no_verdict(run, two.failure, str(two.run_dir))
    messages = [row[1] for row in two.after.table("outbox").rows]
    if sorted(effects(two)) != sorted(messages):
        return Verdict(
            "incorrect",
            say(
                "lesson5.idempotent_consumer.two_messages",
                messages=", ".join(messages),
                rows=len(effects(two)),
            ),
            str(two.run_dir),
        )
    return Verdict(
        "correct",
        say("lesson5.idempotent_consumer.correct"),
        str(redelivered.run_dir),
    )


idempotent_consumer = Exercise(
    name="lesson5.idempotent_consumer",
    solution_file="05_idempotent_consumer.py",
    starter=CONSUMER_STARTER,
    judge=judge_consumer,
    code=True,
)
