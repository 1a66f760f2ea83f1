"""Lesson 5 · The unknown outcome (notebooks/05_the_unknown_outcome.ipynb): its checked
exercises on the remote call. Each check runs real calls against a real ticket service in its
own process, with real kills and timeouts, and reads back both sides.

    lesson5.predict_tickets.check(tickets_after)   # .hint(), .solution()
    lesson5.recover_unknown.check(recover)
    lesson5.idempotent_consumer.check(consume)

What the verdicts and hints say is in the catalogue, `lesson5.toml`.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from labkit.language import say
from labkit.studies.outbox.consumer import READER_FILE as CONSUMER_FILE
from labkit.studies.outbox.experiment import (
    CONSUMER_POINT,
    YOURS,
    OutboxResult,
    OutboxSpec,
    consumer_role,
    execute_outbox,
    outbox_counts,
)
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
    check_worker,
    judge_predictions,
    no_verdict,
    source_of,
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
        expects = "lesson5.recover_unknown.expects"
        check_worker(result.recovery, source, LEARNER_FILE, result.run_dir, expects)
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


def run_outbox_case(source: str, name: str, **plan: object) -> tuple[OutboxResult, str | None]:
    """One real outbox run of two orders with the reader's consumer. A consumer that died of
    the reader's error: theirs (ReaderCodeError), unless it came after a consumer killed at its
    point; then that error, in words, comes back beside the run: a redelivery that fails on
    what the kill left (a file made but still empty) is the consumer's answer to the kill."""
    spec = OutboxSpec(YOURS, consumer_source=source, consumer_name=name, orders=2, **plan)
    result = execute_outbox(spec)
    expects = "lesson5.idempotent_consumer.expects"
    after_kill = False
    for worker in result.workers.values():
        if "consumer" not in worker.role:
            continue
        try:
            check_worker(worker, source, CONSUMER_FILE, result.run_dir, expects, (0, -9))
        except ReaderCodeError as error:
            if not after_kill:
                raise
            return result, str(error)
        after_kill = after_kill or worker.role == result.killed
    return result, None


def kill_points(clean: OutboxResult) -> list[tuple[int, str]]:
    """The kill points after each commit and each write each delivery's consumer made, as
    (delivery, point): the reader's own, and the lab's COMMIT of the delivery's transaction,
    last. Every delivery's: a consumer may commit one message another way than the other."""
    deliveries = {consumer_role(n): n for n in range(1, clean.spec.orders + 1)}
    return [
        (deliveries[e["role"]], e["point"])
        for e in clean.trace()
        if e["role"] in deliveries and e["event"] == "point"
        if CONSUMER_POINT.fullmatch(e["point"])
    ]


def noted_files(clean: OutboxResult, event: str) -> str | None:
    """The files the consumers' watches noted as `event`, in words, if any: "unwatched", the
    files of commits the check could not kill the consumer apart at (a file in WAL mode, an
    exclusive lock, two commits with no statement between them); "outside", the files it
    wrote outside the run folder."""
    noted = [e for e in clean.trace() if e["event"] == event]
    files = [f for e in noted for f in (e["files"] if "files" in e else [e["file"]])]
    return say("checks.words.and").join(dict.fromkeys(files)) or None


def killed_at(result: OutboxResult) -> str:
    """The point the run's process was killed at, named as this run named it: the last it
    noted. The plan's name is the clean run's, where a file named after its message ("seen-"
    and the message id) had another message's id."""
    noted = [e for e in result.trace() if e["event"] == "point" and e["role"] == result.killed]
    return noted[-1]["point"] if noted else result.spec.kill_at


def case_said(case: str, result: OutboxResult) -> str:
    """What a run did to the reader's consumer, in the lesson's words."""
    first, second = (row[1] for row in result.after.table("outbox").rows)
    at_kill = outbox_counts(result.before)
    return say(
        f"lesson5.idempotent_consumer.{case}",
        first=first,
        second=second,
        message=(first, second)[result.spec.killed_delivery - 1],
        deliveries=result.deliveries,
        point=killed_at(result),
        effects=at_kill["effects"],
        inbox=at_kill["inbox"],
    )


def same_payload(held: object, sent: str) -> bool:
    """The effect holds the message's payload: the same text, or the same JSON written another
    way (its keys sorted, other spaces)."""
    if held == sent:
        return True
    try:
        return isinstance(held, str) and json.loads(held) == json.loads(sent)
    except ValueError:
        return False


def wrong_effect(result: OutboxResult) -> tuple[str, dict] | None:
    """The first message that did not take effect exactly once, with its own payload: what the
    verdict says of it (its catalogue key and fields), or None."""
    effects = result.after.table("effects").rows  # id, message_id, payload
    for _id, message, payload, _sent in result.after.table("outbox").rows:
        held = [row[2] for row in effects if row[1] == message]
        if len(held) != 1:
            return "wrong", {"rows": len(held), "message": message}
        if not same_payload(held[0], payload):
            return "wrong_payload", {"message": message, "held": held[0], "payload": payload}
    return None


def took_effect_once(case: str, result: OutboxResult) -> Verdict | None:
    """None if each message took effect exactly once, with its payload; else why not, in this
    run's words."""
    if result.failure:
        run = say(f"lesson5.idempotent_consumer.run_{case}")
        return no_verdict(run, result.failure, str(result.run_dir))
    wrong = wrong_effect(result)
    if wrong is None:
        return None
    key, fields = wrong
    said = say(f"lesson5.idempotent_consumer.{key}", case=case_said(case, result), **fields)
    return Verdict("incorrect", said, str(result.run_dir))


def judge_consumer(answer: Callable | str) -> Verdict:
    """Each of two messages must take effect once, with its payload: delivered once each;
    redelivered after the relay is killed, beside a message with the same payload; and
    redelivered after the consumer is killed right after each of its commits and writes to the
    run's files, before it answered the relay. A consumer that writes outside the run folder is
    refused."""
    source, name = source_of(answer)
    clean, _ = run_outbox_case(source, name)  # no kill: an error is theirs
    for noted in ("outside", "unwatched"):
        files = noted_files(clean, noted)
        if files:
            said = say(f"lesson5.idempotent_consumer.{noted}", files=files)
            return Verdict("incorrect", said, str(clean.run_dir))
    wrong = took_effect_once("two", clean)  # a Verdict: true only when correct
    if wrong is not None:
        return wrong
    points = kill_points(clean)
    cases = [("redelivered", 1, "after_deliver"), *(("killed", n, p) for n, p in points)]
    for case, delivery, kill_at in cases:
        result, failed = run_outbox_case(
            source, name, kill_at=kill_at, one_payload=True, killed_delivery=delivery
        )
        if failed:
            said = say(
                "lesson5.idempotent_consumer.redelivery_failed",
                case=case_said(case, result),
                error=failed,
            )
            return Verdict("incorrect", said, str(result.run_dir))
        wrong = took_effect_once(case, result)
        if wrong is not None:
            return wrong
    said = say("lesson5.idempotent_consumer.correct", points=len(points))
    return Verdict("correct", said, str(clean.run_dir))


idempotent_consumer = Exercise(
    name="lesson5.idempotent_consumer",
    solution_file="05_idempotent_consumer.py",
    starter=CONSUMER_STARTER,
    judge=judge_consumer,
    code=True,
)
