"""Lesson 7 · A real Postgres (notebooks/07_real_postgres.ipynb): its checked exercises. Each
check runs real crashes on a real Postgres: the server itself SIGKILLed mid-commit, a reader's
step killed before and after every COMMIT, and two copies of it run at once.

    lesson7.predict_crash.check(order_3_after_restart)   # .hint(), .solution()
    lesson7.one_transaction.check(step)

What the verdicts and hints say is in the catalogue, `lesson7.toml`.
"""

from __future__ import annotations

from collections.abc import Callable

from labkit.language import say
from labkit.studies.postgres.experiment import run_crash, run_race, run_window
from labkit.studies.postgres.spec import (
    CRASH_POINTS,
    LEARNER_FILE,
    NO_KILL,
    READ_POINT,
    RaceResult,
    WindowResult,
)
from labkit.studies.postgres.stores import KEY, PAYLOAD
from labkit.views.postgres import saw_words
from labkit.workshop.checks import (
    Exercise,
    Measured,
    ReaderCodeError,
    Verdict,
    each,
    judge_predictions,
    no_verdict,
    one_of,
    source_of,
    worker_code_error,
)

__all__ = ["one_transaction", "predict_crash"]

SURVIVAL = one_of("kept", "lost")


def measure_crash(point: str) -> Measured:
    """Order-3 after the server was SIGKILLed at `point` and restarted: kept or lost."""
    result = run_crash(point)
    seen = result.seen_in_flight
    story = say(
        "lesson7.predict_crash.story",
        state=seen.get("state"),
        wait_event=seen.get("wait_event"),
        saw=saw_words(result.client_saw),  # a code, or Postgres's error: in words
    )
    value = "kept" if result.in_flight_survived else "lost"
    return Measured(value, story, result.run_dir, result.failure)


def judge_crash(predicted: object) -> Verdict:
    return judge_predictions(predicted, CRASH_POINTS, each(measure_crash), SURVIVAL)


predict_crash = Exercise(
    "lesson7.predict_crash",
    "07_predict_crash.py",
    starter="""order_3_after_restart = {
    "before_commit": None,
    "commit_in_flight": None,
    "commit_flushed": None,
    "after_commit": None,
}""",
    judge=judge_crash,
)


# --- write the step as one transaction -----------------------------------------------------

STEP_STARTER = """def step(db):
    # db.execute(sql, params) runs one statement and returns its rows (a list of tuples);
    # `with db.transaction():` makes one transaction. Tables: progress(id=1, done 0 or 1),
    # receipts(op_key, payload). KEY and PAYLOAD are the receipt's values.
    if db.execute("SELECT done FROM progress WHERE id=1")[0][0] == 1:
        return
    with db.transaction():
        db.execute("INSERT INTO receipts(op_key, payload) VALUES (%s, %s)", (KEY, PAYLOAD))
    with db.transaction():
        db.execute("UPDATE progress SET done=1 WHERE id=1")
"""


# Transactions Postgres rolls back, which the step must run again, and what the verdict says:
# under SERIALIZABLE (and REPEATABLE READ) one whose reads another's commit made stale (SQLSTATE
# 40001); one of two that each wait for a lock the other holds (40P01: two FOR SHARE, then two
# writes).
ROLLED_BACK = {
    "psycopg.errors.SerializationFailure": "lesson7.one_transaction.needs_a_retry",
    "psycopg.errors.DeadlockDetected": "lesson7.one_transaction.deadlock",
}


def checked_run(result: WindowResult | RaceResult, what: str, source: str) -> Verdict | None:
    """A run that failed: a transaction Postgres rolled back that the step did not run again
    (a wrong answer: it needs a retry), the reader's own error (an error verdict, at their
    line), or a failure of the run itself (no verdict); None if it did not fail."""
    if not result.failure:
        return None
    # The reader's step raised (bench.failures.worker_failure): a worker exited 1 with its
    # error's last line, and the line of theirs it came from (an SQL error raised inside
    # psycopg has none).
    failure = result.failure
    if failure["code"] != "exited" or failure.get("exit_code") != 1 or not failure["error"]:
        return no_verdict(what, failure, result.run_dir)
    rolled_back = ROLLED_BACK.get(failure["error"].split(":", 1)[0])
    if rolled_back:
        said = say(rolled_back, run=what, error=failure["error"])
        return Verdict("incorrect", said, result.run_dir)
    line = failure.get("line") if failure.get("file") == LEARNER_FILE else None
    raise ReaderCodeError(worker_code_error(failure["error"], line, source), result.run_dir)


def receipt_wrong(run: WindowResult, what: str) -> Verdict | None:
    """A receipt of other values than KEY and PAYLOAD, which a count of receipts alone takes
    for the step's own; None if there is none."""
    if not run.other_receipts:
        return None
    op_key, payload = run.other_receipts[0]
    said = say(
        "lesson7.one_transaction.wrong_receipt",
        run=what,
        op_key=op_key,
        payload=payload,
        key=KEY,
        expected=PAYLOAD,
    )
    return Verdict("incorrect", said, run.run_dir)


def judge_step(answer: Callable | str) -> Verdict:
    """Killed before and after each of its COMMITs, a fresh worker recovers: one receipt of KEY
    and PAYLOAD, and done=1, each time. Then two copies at once, the first held at each of those
    points and after each of its reads in turn: still one receipt."""
    source, _ = source_of(answer)
    clean = run_window(kill_at=NO_KILL, step_source=source)
    run_clean = say("lesson7.one_transaction.run_clean")
    failed = checked_run(clean, run_clean, source)
    if failed is None:
        failed = receipt_wrong(clean, run_clean)
    if failed is not None:  # a Verdict: true only when correct
        return failed
    points = [e["point"] for e in clean.events if e["role"] == "first" and e["event"] == "point"]
    # Killed after a read, a step leaves what it leaves killed before its next COMMIT: the
    # points after reads are only raced at.
    kill_points = [p for p in points if not p.startswith(READ_POINT)]
    if not kill_points:
        return Verdict("incorrect", say("lesson7.one_transaction.no_transaction"))
    for point in kill_points:
        run = run_window(kill_at=point, step_source=source)
        run_killed = say("lesson7.one_transaction.run_killed", point=point)
        failed = checked_run(run, run_killed, source)
        if failed is not None:  # a Verdict: true only when correct
            return failed
        if run.outcome != "consistent":
            at_kill, after = run.before, run.after
            said = say(
                "lesson7.one_transaction.recovered_wrong",
                point=point,
                done_at_kill=at_kill["done"],
                receipts_at_kill=at_kill["receipts"],
                done=after["done"],
                receipts=after["receipts"],
                outcome=run.outcome,
            )
            return Verdict("incorrect", said, run.run_dir)
        failed = receipt_wrong(run, run_killed)
        if failed is not None:
            return failed
    # The first is held at each point in turn while the second runs: once it has no lock the
    # second waits for (after a commit), and once it has (before one). After the second waits,
    # who goes first is the scheduler's choice; a step that commits between its read of done
    # and its writes leaves two receipts when held after that commit, every time. Held after
    # a read, both read done=0 under a lock both can take (FOR SHARE): a deadlock, every time.
    waits = []
    for point in points:
        race = run_race(step_source=source, hold=point)
        failed = checked_run(race, say("lesson7.one_transaction.run_race", point=point), source)
        if failed is not None:  # a Verdict: true only when correct
            return failed
        waited = race.reports["second_waited_at"]
        if race.receipts != 1:
            said = say(
                "lesson7.one_transaction.race_wrong",
                point=point,
                receipts=race.receipts,
                waited=waited or say("checks.words.nothing"),
            )
            return Verdict("incorrect", said, race.run_dir)
        waits.append(waited)
    said = say(
        "lesson7.one_transaction.correct",
        points=len(kill_points),
        waited=next((w for w in waits if w), say("checks.words.nothing")),
    )
    return Verdict("correct", said, clean.run_dir)


one_transaction = Exercise(
    "lesson7.one_transaction",
    "07_one_transaction.py",
    starter=STEP_STARTER,
    judge=judge_step,
    code=True,
)
