"""Lesson 5's outbox exercise, "make the consumer idempotent" (for the lead to merge into
lesson5): the reader writes the consumer; the judge runs it where the lab runs its own.

The judge runs two real outboxes. In the first, the relay is SIGKILLed between delivering the
message and marking it sent, so a fresh relay delivers it again: the reader's consumer must
leave one effect. In the second, nobody dies and the producer commits two orders: two
different messages must leave two effects (a consumer that refuses everything after its first
message, or keys its inbox on anything but the message id, fails here). The counts come from
the files, read back through a new read-only connection.

    outbox_exercise.idempotent_consumer.check(consume)   # .hint(), .solution()
"""

from __future__ import annotations

import re
from collections.abc import Callable

from labkit.studies.unknown_outcome.consumer import READER_FILE
from labkit.studies.unknown_outcome.outbox import YOURS, OutboxResult, OutboxSpec, execute_outbox
from labkit.workshop.checks import (
    Exercise,
    ReaderCodeError,
    Verdict,
    code_error,
    no_verdict,
    source_of,
)

__all__ = ["idempotent_consumer", "judge_consumer"]

STARTER = """def consume(db, subscriber, message_id, payload):
    # db: a connection to consumer.db, inside the transaction this delivery commits in.
    # Tables: effects(message_id, payload) and inbox(subscriber, message_id),
    #         the inbox with UNIQUE(subscriber, message_id).
    db.execute("INSERT INTO effects(message_id, payload) VALUES(?, ?)", (message_id, payload))
"""
READER_FRAME = re.compile(rf'File "{re.escape(READER_FILE)}", line (\d+)')


def readers_error(result: OutboxResult, source: str) -> str | None:
    """The reader's own error, if a consumer process died of it: its last line, their line."""
    for report in result.workers.values():
        if (
            "consumer" in report.role
            and report.exit_code not in (0, -9)
            and READER_FRAME.search(report.stderr)
        ):
            last = report.stderr.strip().splitlines()[-1]
            return code_error(last, int(READER_FRAME.findall(report.stderr)[-1]), source)
    return None


def effects(result: OutboxResult) -> list[str]:
    """The message id of every effect row, as the file holds it after recovery."""
    return [row[1] for row in result.after.table("effects").rows]


def run_case(source: str, name: str, **plan: object) -> OutboxResult:
    """One real outbox run with the reader's consumer; their error, if any, as theirs."""
    spec = OutboxSpec(YOURS, consumer_source=source, consumer_name=name, **plan)
    result = execute_outbox(spec)
    error = readers_error(result, source)
    if error:
        raise ReaderCodeError(error, str(result.run_dir))
    return result


def judge_consumer(answer: Callable | str) -> Verdict:
    """A redelivery after a kill must change nothing; two messages must both take effect."""
    source, name = source_of(answer)
    redelivered = run_case(source, name, kill_at="after_deliver")
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
    two = run_case(source, name, orders=2)
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
    name="idempotent_consumer",
    solution_file="05_idempotent_consumer.py",
    starter=STARTER,
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
