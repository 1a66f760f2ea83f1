"""Lesson 7's judges say exactly what each run on Postgres showed (issue 33: the mutants
mutmut left in workshop/lesson7.py): the crash points a prediction runs and what each run's
story tells, the kill points of a step in the order its clean run passed them, what each
recovery left, the race's receipts, and a transaction Postgres rolled back, to the word.

The runs here are stand-ins for `run_crash`, `run_window` and `run_race`, their results the
study's own dataclasses with the rows a real run of that kind leaves: tests/test_postgres*.py
runs the real ones on the lab's Postgres, and tests/test_exercises.py checks each exercise.
"""

from __future__ import annotations

import pytest

from labkit.studies.postgres.spec import (
    NO_KILL,
    CrashResult,
    CrashSpec,
    RaceResult,
    RaceSpec,
    WindowResult,
    WindowSpec,
    outcome_of,
)
from labkit.workshop import lesson7

STEP = (
    "def step(db):\n"
    "    with db.transaction():\n"
    '        db.execute("UPDATE progress SET done=1 WHERE id=1")\n'
)


def crash(point: str, survived: bool, **more: object) -> CrashResult:
    """A server crash whose third order survived or not."""
    return CrashResult(
        CrashSpec(point),
        f"/runs/{point}",
        ["order-1", "order-2"],
        "order-3",
        more.pop("seen", {"state": "active", "wait_event": "WALWrite"}),
        more.pop("saw", "committed"),
        [101, 102],
        ["order-1", "order-2", *(["order-3"] if survived else [])],
        [],
        1.5,
        **more,
    )


class Server:
    """run_crash's stand-in: whether order-3 survives at each point; keeps the points run."""

    def __init__(self, monkeypatch, kept: set[str], **more: object) -> None:
        self.kept, self.more, self.asked = kept, more, []
        monkeypatch.setattr(lesson7, "run_crash", self.run)

    def run(self, point: str) -> CrashResult:
        self.asked.append(point)
        return crash(point, point in self.kept, **self.more.get(point, {}))


RIGHT = {
    "before_commit": "lost",
    "commit_in_flight": "lost",
    "commit_flushed": "kept",
    "after_commit": "kept",
}


def test_right_predictions_run_each_crash_point_once(monkeypatch):
    server = Server(monkeypatch, {"commit_flushed", "after_commit"})
    verdict = lesson7.predict_crash.check(RIGHT)
    assert server.asked == ["before_commit", "commit_in_flight", "commit_flushed", "after_commit"]
    assert (verdict.status, verdict.message) == ("correct", "every prediction matches a real run")
    assert verdict.run_dir == "/runs/before_commit"


def test_a_wrong_prediction_tells_what_postgres_showed_the_client_and_what_commit_returned(
    monkeypatch,
):
    seen = {"seen": {"state": "active", "wait_event": "WalSync"}, "saw": "an error"}
    Server(monkeypatch, {"commit_flushed"}, before_commit=seen)
    partly = {"before_commit": "kept", "commit_flushed": "Kept."}
    verdict = lesson7.predict_crash.check(partly)
    assert (verdict.status, verdict.run_dir) == ("incorrect", "/runs/before_commit")
    assert verdict.message == (
        "1 of your 2 predictions match real runs; not these:\n"
        "before_commit: you said 'kept', the real run gave 'lost' (Postgres showed the client"
        " active (WalSync); its COMMIT returned an error)\n"
        "Still open: commit_in_flight, after_commit."
    )


def test_a_crash_run_that_failed_gives_no_verdict(monkeypatch):
    Server(monkeypatch, set(), before_commit={"failure": "the server did not restart"})
    verdict = lesson7.predict_crash.check(RIGHT)
    assert (verdict.status, verdict.run_dir) == ("no verdict", "/runs/before_commit")
    assert verdict.message == (
        "the real run of before_commit failed (the server did not restart), so it says"
        " nothing about your answer: check again"
    )


# --- one_transaction --------------------------------------------------------------------------


def point(name: str, role: str = "first", event: str = "point") -> dict:
    return {"role": role, "event": event, "point": name}


def window(kill_at: str, before: tuple[int, int], after: tuple[int, int], **more) -> WindowResult:
    """A commit-window run: (done, receipts) at the kill and after recovery."""
    outcome = more.pop("outcome", outcome_of(*after))
    return WindowResult(
        WindowSpec(kill_at=kill_at, step_source=STEP),
        f"/runs/{kill_at}",
        "s1",
        {"done": before[0], "receipts": before[1]},
        {"done": after[0], "receipts": after[1]},
        outcome,
        more.pop("first_exit", -9),
        0,
        **more,
    )


CLEAN_EVENTS = [
    point("before_commit 1"),
    point("after_commit 1"),
    point("before_commit 9", role="recovery"),
    point("after_commit 1", event="start"),
]


def race(
    receipts: int = 1, waited: str | None = "SELECT ... FOR UPDATE", run_dir="/runs/race", **more
) -> RaceResult:
    return RaceResult(
        RaceSpec(step_source=STEP),
        run_dir,
        "s2",
        waited is not None,
        {"first": {"wrote": True}, "second": {"skipped": True}, "second_waited_at": waited},
        receipts,
        1,
        "consistent" if receipts == 1 else "duplicate",
        **more,
    )


class Postgres:
    """run_window's and run_race's stand-in: the clean run, each killed one, then the race
    held at each point (`races`: one result for every point, or one per point)."""

    def __init__(self, monkeypatch, clean: WindowResult, killed: dict, races: RaceResult | dict):
        self.clean, self.killed, self.races, self.asked = clean, killed, races, []
        monkeypatch.setattr(lesson7, "run_window", self.window)
        monkeypatch.setattr(lesson7, "run_race", self.run_race)

    def window(self, kill_at: str, step_source: str) -> WindowResult:
        self.asked.append((kill_at, step_source))
        return self.clean if kill_at == NO_KILL else self.killed[kill_at]

    def run_race(self, step_source: str, hold: str) -> RaceResult:
        self.asked.append((f"race held at {hold}", step_source))
        return self.races[hold] if isinstance(self.races, dict) else self.races


def recovered(*points: str) -> dict:
    return {p: window(p, (1, 1), (1, 1)) for p in points}


@pytest.mark.parametrize(
    ("waits", "says"),
    [
        (("SELECT ... FOR UPDATE", None), "'SELECT ... FOR UPDATE'"),
        ((None, "UPDATE progress"), "'UPDATE progress'"),  # said from the race where it waited
        ((None, None), "'nothing'"),
    ],
)
def test_a_right_step_is_killed_at_each_point_its_clean_run_passed_then_raced_held_at_each(
    monkeypatch, waits, says
):
    clean = window(NO_KILL, (1, 1), (1, 1), events=CLEAN_EVENTS, first_exit=0)
    killed = recovered("before_commit 1", "after_commit 1")
    races = {"before_commit 1": race(1, waits[0]), "after_commit 1": race(1, waits[1])}
    db = Postgres(monkeypatch, clean, killed, races)
    verdict = lesson7.one_transaction.check(STEP)
    assert db.asked == [
        ("none", STEP),
        ("before_commit 1", STEP),
        ("after_commit 1", STEP),
        ("race held at before_commit 1", STEP),
        ("race held at after_commit 1", STEP),
    ]
    assert (verdict.status, verdict.run_dir) == ("correct", "/runs/none")
    assert verdict.message == (
        "killed at each of 2 points, recovery left one receipt and done=1; two at once left one"
        f" receipt (the second waited at {says})"
    )


def test_a_step_that_made_no_transaction_is_told_so_and_nothing_more_runs(monkeypatch):
    clean = window(NO_KILL, (0, 0), (0, 0), events=[point("x", role="recovery")])
    db = Postgres(monkeypatch, clean, {}, race())
    verdict = lesson7.one_transaction.check(STEP)
    assert db.asked == [("none", STEP)]
    assert (verdict.status, verdict.message, verdict.run_dir) == (
        "incorrect",
        "your step made no transaction: nothing was written",
        None,
    )


@pytest.mark.parametrize(
    ("after", "outcome"),
    [((1, 0), "lost"), ((1, 2), "duplicate")],
)
def test_a_kill_that_recovered_wrong_says_what_the_files_held_at_the_kill_and_after(
    monkeypatch, after, outcome
):
    clean = window(NO_KILL, (1, 1), (1, 1), events=CLEAN_EVENTS)
    killed = {
        "before_commit 1": window("before_commit 1", (1, 1), (1, 1)),
        "after_commit 1": window("after_commit 1", (0, 1), after),
    }
    db = Postgres(monkeypatch, clean, killed, race())
    verdict = lesson7.one_transaction.check(STEP)
    assert len(db.asked) == 3  # no race after a wrong recovery
    assert (verdict.status, verdict.run_dir) == ("incorrect", "/runs/after_commit 1")
    assert verdict.message == (
        f"killed at 'after_commit 1' (done=0, 1 receipts at the kill), a fresh worker recovered"
        f" to done={after[0]} and {after[1]} receipts: {outcome}"
    )


@pytest.mark.parametrize(
    ("run", "said"),
    [(NO_KILL, "a run without a kill"), ("after_commit 1", "the run killed at 'after_commit 1'")],
)
def test_a_receipt_of_other_values_than_key_and_payload_is_wrong_in_the_run_that_left_it(
    monkeypatch, run, said
):
    """Counted alone, a receipt with the key and the payload swapped passed for the step's own
    (the step was judged correct)."""
    swapped = [["demo-report-17", "job-17:save-report:v1"]]
    clean = window(NO_KILL, (1, 1), (1, 1), events=CLEAN_EVENTS)
    killed = recovered("before_commit 1", "after_commit 1")
    left = {NO_KILL: clean, **killed}[run]
    left.other_receipts = swapped
    db = Postgres(monkeypatch, clean, killed, race())
    verdict = lesson7.one_transaction.check(STEP)
    assert [kill_at for kill_at, _ in db.asked][-1] == run  # the run that left it is the last
    assert (verdict.status, verdict.run_dir) == ("incorrect", f"/runs/{run}")
    assert verdict.message == (
        f"{said} left a receipt of op_key 'demo-report-17' and payload 'job-17:save-report:v1':"
        " the step's receipt holds KEY ('job-17:save-report:v1') and PAYLOAD ('demo-report-17')"
    )


@pytest.mark.parametrize(
    ("waited", "says"), [("UPDATE progress", "'UPDATE progress'"), (None, "'nothing'")]
)
def test_two_receipts_from_the_race_say_where_the_second_waited(monkeypatch, waited, says):
    clean = window(NO_KILL, (1, 1), (1, 1), events=CLEAN_EVENTS[:1])
    Postgres(monkeypatch, clean, recovered("before_commit 1"), race(2, waited))
    verdict = lesson7.one_transaction.check(STEP)
    assert (verdict.status, verdict.run_dir) == ("incorrect", "/runs/race")
    assert verdict.message == (
        "every kill recovered, but two workers running the step at once left 2 receipts: while"
        " the first was held at 'before_commit 1', the second wrote one of its own too, not seeing"
        f" the first's (it waited at {says}). In SQLite BEGIN IMMEDIATE stops it at the"
        " start; what does it in Postgres?"
    )


def test_a_race_held_after_a_commit_that_left_two_receipts_is_wrong_though_the_first_was_right(
    monkeypatch,
):
    """Held before its commit, the first had a lock the second waited for; who went first after
    that was the scheduler's choice (one receipt, this time). Held after the commit of its read
    of done, the second read done=0 too: two receipts, every time."""
    clean = window(NO_KILL, (1, 1), (1, 1), events=CLEAN_EVENTS)
    races = {
        "before_commit 1": race(1, "SELECT ... FOR UPDATE", run_dir="/runs/race 1"),
        "after_commit 1": race(2, None, run_dir="/runs/race 2"),
    }
    db = Postgres(monkeypatch, clean, recovered("before_commit 1", "after_commit 1"), races)
    verdict = lesson7.one_transaction.check(STEP)
    assert db.asked[-2:] == [
        ("race held at before_commit 1", STEP),
        ("race held at after_commit 1", STEP),
    ]
    assert (verdict.status, verdict.run_dir) == ("incorrect", "/runs/race 2")
    assert verdict.message == (
        "every kill recovered, but two workers running the step at once left 2 receipts: while"
        " the first was held at 'after_commit 1', the second wrote one of its own too, not seeing"
        " the first's (it waited at 'nothing'). In SQLite BEGIN IMMEDIATE stops it at the"
        " start; what does it in Postgres?"
    )


def test_a_step_is_raced_held_after_its_read_but_not_killed_there(monkeypatch):
    """Killed after a read, a step leaves what it leaves killed before its next COMMIT; held
    there in a race, the second reads what the first read before either writes."""
    events = [point("after read 1"), *CLEAN_EVENTS]
    clean = window(NO_KILL, (1, 1), (1, 1), events=events)
    db = Postgres(monkeypatch, clean, recovered("before_commit 1", "after_commit 1"), race())
    verdict = lesson7.one_transaction.check(STEP)
    assert db.asked == [
        ("none", STEP),
        ("before_commit 1", STEP),
        ("after_commit 1", STEP),
        ("race held at after read 1", STEP),
        ("race held at before_commit 1", STEP),
        ("race held at after_commit 1", STEP),
    ]
    assert (verdict.status, verdict.run_dir) == ("correct", "/runs/none")
    assert verdict.message.startswith("killed at each of 2 points, recovery left one receipt")


def failing_in(monkeypatch, where: str, failure: dict) -> None:
    """A step killed at one point whose run `where` (clean, killed, race) failed so."""
    failed = {where: {"failure": failure}}
    clean = window(NO_KILL, (1, 1), (1, 1), events=CLEAN_EVENTS[:1], **failed.get("clean", {}))
    killed = window("before_commit 1", (1, 1), (1, 1), **failed.get("killed", {}))
    Postgres(monkeypatch, clean, {"before_commit 1": killed}, race(**failed.get("race", {})))


RUN_DIRS = {"clean": "/runs/none", "killed": "/runs/before_commit 1", "race": "/runs/race"}
ROLLED_BACK = {  # bench.failures.worker_failure's code and fields
    "code": "exited",
    "role": "first",
    "exit_code": 1,
    "error": "psycopg.errors.SerializationFailure: could not serialize access"
    " due to concurrent update",
}


def exited(role: str, error: str, **where: object) -> dict:
    """A worker that exited 1 with `error` (at the reader's `file` and `line`, if given)."""
    return {"code": "exited", "role": role, "exit_code": 1, "error": error, **where}


@pytest.mark.parametrize(
    ("where", "run"),
    [
        ("clean", "a run without a kill"),
        ("killed", "the run killed at 'before_commit 1'"),
        ("race", "the run of two workers at once (the first held at 'before_commit 1')"),
    ],
)
def test_a_transaction_rolled_back_and_not_run_again_needs_a_retry(monkeypatch, where, run):
    failing_in(monkeypatch, where, ROLLED_BACK)
    verdict = lesson7.one_transaction.check(STEP)
    assert verdict.status == "incorrect"
    assert verdict.run_dir == RUN_DIRS[where]
    assert verdict.message == (
        f"in {run}, Postgres rolled a transaction back (psycopg.errors.SerializationFailure:"
        " could not serialize access due to concurrent update) and your step did not run it"
        " again: under SERIALIZABLE (and REPEATABLE READ) Postgres refuses a transaction whose"
        " reads another one made stale, so a step that runs at that level needs a retry (catch"
        " psycopg.errors.SerializationFailure and run the whole transaction again)"
    )


def test_a_rolled_back_error_whose_words_hold_a_colon_is_still_known_by_its_class(monkeypatch):
    """The error's class is what comes before its first colon: Postgres's words may hold more."""
    error = "psycopg.errors.SerializationFailure: could not serialize access: read/write"
    failing_in(monkeypatch, "clean", {**ROLLED_BACK, "error": error})
    verdict = lesson7.one_transaction.check(STEP)
    assert verdict.status == "incorrect" and f"({error})" in verdict.message, verdict


def test_a_deadlock_postgres_broke_and_the_step_did_not_run_again_is_wrong(monkeypatch):
    """Both took a lock both can take (FOR SHARE) and read done=0; each then waited for the
    other's to write: Postgres rolled one back (40P01), like a serialization failure."""
    failing_in(monkeypatch, "race", exited("second", "psycopg.errors.DeadlockDetected: deadlock"))
    verdict = lesson7.one_transaction.check(STEP)
    assert (verdict.status, verdict.run_dir) == ("incorrect", "/runs/race")
    assert verdict.message == (
        "in the run of two workers at once (the first held at 'before_commit 1'), Postgres"
        " rolled a transaction back (psycopg.errors.DeadlockDetected: deadlock) and your step"
        " did not run it again: each of the two workers waited for a lock the other held. A"
        " lock both can take (FOR SHARE) lets both read done=0, and then each waits for the"
        " other to let go before it can write done=1; take a lock only one can hold, or catch"
        " psycopg.errors.DeadlockDetected and run the whole transaction again"
    )


def test_the_steps_own_error_is_shown_at_its_line_with_its_run(monkeypatch):
    error = exited("first", "NameError: name 'KYE' is not defined", file="<your step>", line=3)
    clean = window(NO_KILL, (0, 0), (0, 0), failure=error)
    Postgres(monkeypatch, clean, {}, race())
    verdict = lesson7.one_transaction.check(STEP)
    assert (verdict.status, verdict.run_dir) == ("error", "/runs/none")
    assert verdict.message.startswith(
        "your code raised NameError: name 'KYE' is not defined, at line 3:"
        ' db.execute("UPDATE progress SET done=1 WHERE id=1")'
    )


def test_an_sql_error_with_no_line_of_theirs_is_their_error_without_a_line(monkeypatch):
    error = exited("first", 'psycopg.errors.UndefinedTable: relation "x" does not exist')
    clean = window(NO_KILL, (0, 0), (0, 0), failure=error)
    Postgres(monkeypatch, clean, {}, race())
    verdict = lesson7.one_transaction.check(STEP)
    assert (verdict.status, verdict.message) == (
        "error",
        'your code raised psycopg.errors.UndefinedTable: relation "x" does not exist\n'
        "Mend it and check again.",
    )


@pytest.mark.parametrize(
    ("where", "run"),
    [
        ("clean", "a run without a kill"),
        ("killed", "the run killed at 'before_commit 1'"),
        ("race", "the run of two workers at once (the first held at 'before_commit 1')"),
    ],
)
def test_a_run_that_failed_by_itself_gives_no_verdict_naming_it(monkeypatch, where, run):
    failing_in(monkeypatch, where, {"code": "timed_out", "role": "recovery", "seconds": 60.0})
    verdict = lesson7.one_transaction.check(STEP)
    assert verdict.status == "no verdict"
    assert verdict.run_dir == RUN_DIRS[where]
    assert verdict.message == (
        f"{run} failed (recovery worker timed out after 60 s), so it says nothing about your"
        " answer: check again"
    )


@pytest.mark.parametrize("where", ["killed", "race"])
def test_the_steps_own_error_in_a_killed_run_or_the_race_is_shown_at_its_line(monkeypatch, where):
    error = exited("second", "ZeroDivisionError: division by zero", file="<your step>", line=2)
    failing_in(monkeypatch, where, error)
    verdict = lesson7.one_transaction.check(STEP)
    assert (verdict.status, verdict.run_dir) == ("error", RUN_DIRS[where])
    assert verdict.message == (
        "your code raised ZeroDivisionError: division by zero, at line 2: with"
        " db.transaction():\nMend it and check again."
    )


def test_a_worker_that_exited_otherwise_than_by_raising_gives_no_verdict(monkeypatch):
    """Only exit 1 with an error line is the reader's step raising (bench.failures): a worker
    that exited 2, even with a last line, is a run that failed by itself."""
    failing_in(monkeypatch, "clean", {**exited("first", "SystemExit: 2"), "exit_code": 2})
    verdict = lesson7.one_transaction.check(STEP)
    assert (verdict.status, verdict.run_dir) == ("no verdict", RUN_DIRS["clean"]), verdict


def test_an_error_from_a_file_not_the_steps_is_shown_without_a_line_of_the_step(monkeypatch):
    """The line is the step's only where the error came from the step's own file: a line of
    another exec'd file is not a line of the reader's step."""
    error = exited("first", "ValueError: bad", file="<string>", line=2)
    failing_in(monkeypatch, "clean", error)
    verdict = lesson7.one_transaction.check(STEP)
    assert (verdict.status, verdict.message) == (
        "error",
        "your code raised ValueError: bad\nMend it and check again.",
    ), verdict
