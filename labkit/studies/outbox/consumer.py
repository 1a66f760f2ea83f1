"""The consumer: one delivery of one message, in a process of its own.

The relay starts one per delivery (entry `labkit.studies.outbox.consumer:consume`).
A `plain` consumer applies the effect every time it is handed the message; a `dedupe` consumer
first notes the message in its inbox, keyed (subscriber, message_id), in the same transaction
as the effect: a redelivery finds the inbox row and changes nothing, and a kill before the
commit leaves neither. A reader's consumer (an exercise) runs inside that transaction, with a
kill point after every commit and every write made to the files of the run folder, theirs or
the lab's own COMMIT, and after every file of it made, emptied or removed
(`explorer.readers_writes`). Worker-side: standard library only.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from labkit.bench.gate import Gate, report
from labkit.bench.trace import Trace
from labkit.studies.outbox.stores import CONSUMER_FILE, SUBSCRIBER, ConsumerStore

__all__ = ["READER_FILE", "consume"]


READER_FILE = "<your consumer>"  # the reader's code's file name in a traceback


def readers_consumer(job: dict) -> Callable[[sqlite3.Connection, str, str, str], None]:
    """A consumer written by a reader (an exercise): its source, run here in place of ours."""
    namespace: dict = {}
    exec(compile(job["source"], READER_FILE, "exec"), namespace)  # the reader's own lab
    return namespace[job["name"]]


def consume(job: dict) -> None:
    """Take in the job's message; report whether its effect was applied this time."""
    trace = Trace(job["run_dir"], job["role"])
    trace.event("start", message_id=job["message_id"], dedupe=job["dedupe"])
    gate = Gate(trace, job)
    if "source" in job:  # only a reader's consumer pays for the watches
        from labkit.studies.explorer.readers_writes import watch_writes

        watch_writes(job, gate, trace)
    consumer = ConsumerStore(job["run_dir"], CONSUMER_FILE, trace)
    with consumer:
        if "source" in job:  # a reader's consumer: its own statements, in this transaction
            readers_consumer(job)(consumer.db, SUBSCRIBER, job["message_id"], job["payload"])
            applied = None  # only the files can tell
        else:
            applied = not job["dedupe"] or consumer.take_in(SUBSCRIBER, job["message_id"])
            if applied:
                consumer.apply(job["message_id"], job["payload"])
            else:
                trace.event("seen", message_id=job["message_id"], reason="in the inbox already")
    gate("consumer_committed")
    report(job, applied=applied)
    trace.event("exit", code=0)
