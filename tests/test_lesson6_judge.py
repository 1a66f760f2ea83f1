"""Lesson 6's judges say exactly what each race's files showed (issue 33: the mutants mutmut
left in workshop/lesson6.py): the schedules each check forces and in which order, the races
it adds for each statement of the reader's that ran outside a transaction, and the verdict of
each way a race can end wrong, to the word.

The races here are stand-ins for `execute_claim`: a race's rows are written out by hand, as the
files of a real race of that kind hold them (tests/test_leases.py runs the real ones), and the
outcome is the study's own word for them. A real check of each exercise is in
tests/test_exercises.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from labkit.bench.snapshot import Snapshot, Table
from labkit.bench.worker_report import WorkerReport
from labkit.studies.leases.experiment import ClaimResult
from labkit.studies.leases.outcome import classify
from labkit.studies.leases.spec import ClaimSpec
from labkit.workshop import lesson6

CLAIM = "def claim(db, me, now, lease_ms):\n    return None\n"
RECEIVE = "def receive(db, writer, fence, body):\n    return True\n"

HELD = "w1 frozen 100 ms, its lease 200 ms: still held when w2 comes at 50 ms"
PAST = (
    "w1 frozen 300 ms, past its 200 ms lease: w2 comes at 200 ms, when now = lease_until,"
    " and takes over"
)
JUST = (
    "w1 frozen exactly 200 ms, its lease 200 ms: w2 comes at 200 ms, when now = lease_until:"
    " the lease has just expired"
)
ENDING = (
    "w1 frozen 300 ms, past its 200 ms lease, but w2 comes at 199 ms, just before lease_until:"
    " the lease is still held"
)
FINISHED = "w1 finished before w2 came: the task is done"


@dataclass
class Race(ClaimResult):
    """A race as execute_claim returns it, with its trace in memory."""

    events: list[dict] = field(default_factory=list)

    def trace(self) -> list[dict]:
        return self.events


def files(
    task_fence: int, applied: list, refused: list = (), document_fence: int = 0, lease: int = 200
) -> Snapshot:
    """The two files' rows: the task under `task_fence`, its lease until `lease` (w1's claim at
    0 ms; 400 for w2's at 200 ms); `applied` (writer, token) and `refused` (writer, token,
    highest) as the receiver logged them."""
    task = ["job-17", "claimed", "w", task_fence, lease]
    fence = applied[-1][1] if applied else document_fence
    return Snapshot(
        {
            "tasks.db": {"task": Table(["id", "state", "owner", "fence", "lease_until"], [task])},
            "receiver.db": {
                "document": Table(
                    ["id", "body", "writer", "fence"], [["report-17", "", "w", fence]]
                ),
                "applied": Table(
                    ["seq", "writer", "fence", "body"],
                    [[n, w, f, "b"] for n, (w, f) in enumerate(applied, 1)],
                ),
                "refused": Table(
                    ["seq", "writer", "fence", "highest"],
                    [[n, *row] for n, row in enumerate(refused, 1)],
                ),
            },
        }
    )


def worker(role: str, exit_code: int = 0, stderr: str = "") -> WorkerReport:
    return WorkerReport(role, 1, exit_code, None, False, 0.1, "", stderr)


def race(after: Snapshot, reports: dict | None = None, **more: object) -> Race:
    """A race that left `after`; each worker's report (default: w1 claimed 33, and w2 34 if
    the task row holds 34)."""
    taken = after.table("task").rows[0][3] == 34
    w2 = {"claimed": True, "fence": 34} if taken else {"claimed": False}
    reports = reports or {"w1": {"claimed": True, "fence": 33}, "w2": w2}
    workers = more.pop("workers", {role: worker(role) for role in ("w1", "w2")})
    outcome = more.pop("outcome", classify(after))
    return Race(
        ClaimSpec(), Path("/runs/x"), "claimed", True, workers, reports, after, outcome, **more
    )


def points(*numbers: int, part: str = "claim", role: str = "w1") -> list[dict]:
    return [{"role": role, "event": "point", "point": f"{part} statement {n}"} for n in numbers]


ONE_WINNER = files(33, [("w1", 33)])
REFUSED_LATE = files(34, [("w2", 34)], [("w1", 33, 34)], lease=400)  # w2 took over at 200 ms
W2_ONLY = {"w1": {"claimed": False}, "w2": {"claimed": True, "fence": 33}}
# w1's report, then w2's two writes under 34, then w1's correction under 33, refused
CORRECTED = files(34, [("w1", 33), ("w2", 34), ("w2", 34)], [("w1", 33, 34)], lease=400)
CORRECTING = (
    "w1 frozen 300 ms between its report and its correction, past its lease; w2 wrote twice"
    " under 34 meanwhile"
)


class Lab:
    """execute_claim's stand-in: hands out the races given, in order, and keeps what each
    call asked for (the spec's schedule, and the point w1 was frozen at)."""

    def __init__(self, monkeypatch, *races: Race) -> None:
        self.races, self.asked = list(races), []
        monkeypatch.setattr(lesson6, "execute_claim", self.run)

    def run(self, spec: ClaimSpec, stop_at: str | None) -> Race:
        self.asked.append(
            (
                spec.method,
                spec.pause_ms,
                spec.lease_ms,
                spec.arrival_ms,
                spec.same_name,
                spec.writes,
                stop_at,
            )
        )
        result = self.races.pop(0)
        result.spec, result.run_dir = spec, Path(f"/runs/{len(self.asked)}")
        self.sources = (spec.claim_source, spec.receive_source)
        return result


def test_a_right_claim_runs_the_five_schedules_in_order_and_names_each_ending(monkeypatch):
    lab = Lab(
        monkeypatch,
        race(ONE_WINNER),
        race(REFUSED_LATE),
        race(REFUSED_LATE),
        race(ONE_WINNER),
        race(files(33, [("w1", 33)]), {"w1": {"claimed": True, "fence": 33}, "w2": {}}),
    )
    verdict = lesson6.claim_statement.check(CLAIM)
    assert lab.asked == [
        ("lease_with_fence", 100, 200, 50, True, 1, None),
        ("lease_with_fence", 300, 200, 200, True, 1, None),
        ("lease_with_fence", 200, 200, 200, True, 1, None),
        ("lease_with_fence", 300, 200, 199, True, 1, None),
        ("lease_with_fence", 300, 200, 200, True, 1, "never"),
    ]
    assert lab.sources == (CLAIM, None)
    assert (verdict.status, verdict.run_dir) == ("correct", "/runs/1")
    assert verdict.message == (
        f"5 forced races, each as it must end: {HELD}: one winner; {PAST}: refused late write;"
        f" {JUST}: refused late write; {ENDING}: one winner; {FINISHED}: one winner"
    )


def test_a_claim_that_takes_a_lease_over_just_before_it_ends_is_told_so(monkeypatch):
    """A margin for clock skew (lease_until <= now + 50): w2 takes over at 199 ms."""
    early = files(34, [("w2", 34)], [("w1", 33, 34)], lease=399)
    lab = Lab(monkeypatch, race(ONE_WINNER), race(REFUSED_LATE), race(REFUSED_LATE), race(early))
    verdict = lesson6.claim_statement.check(CLAIM)
    assert len(lab.asked) == 4
    assert (verdict.status, verdict.run_dir) == ("incorrect", "/runs/4")
    assert verdict.message == (
        f"{ENDING}: tokens claimed: w1 33, w2 34; the receiver applied 1 write(s) and refused 1;"
        " the document ends under token 34: refused late write (the stale worker came back and"
        " wrote with its old token; the receiver refused it: the newer work stands), where it"
        " must end one winner"
    )


def test_each_statement_outside_a_transaction_but_the_first_is_frozen_before_once(monkeypatch):
    """w1's statements 2 and 3 ran outside a transaction in the first race: each is frozen
    before, inside the lease and past it; the second race shows statement 2 again, and
    w2's points and other events add nothing."""
    first = points(1, 2, 3) + points(4, role="w2") + [{"role": "w1", "event": "cont"}]
    lab = Lab(
        monkeypatch,
        race(ONE_WINNER, events=first),
        race(REFUSED_LATE, events=points(2)),
        race(REFUSED_LATE),
        race(ONE_WINNER),
        race(ONE_WINNER),
        race(ONE_WINNER),
        race(REFUSED_LATE),
        race(ONE_WINNER),
        race(files(33, [("w2", 33)], lease=400), W2_ONLY),  # w1 never claimed: it never writes
    )
    verdict = lesson6.claim_statement.check(CLAIM)
    assert [asked[1:] for asked in lab.asked[5:]] == [
        (100, 200, 50, True, 1, "claim statement 2"),
        (300, 200, 200, True, 1, "claim statement 2"),
        (100, 200, 50, True, 1, "claim statement 3"),
        (300, 200, 200, True, 1, "claim statement 3"),
    ]
    assert verdict.status == "correct" and verdict.message.startswith("9 forced races")
    between = (
        "w1 frozen 300 ms before your statement 3, past its 200 ms lease; w2 came at 200 ms,"
        " when now = lease_until: one winner"
    )
    assert verdict.message.endswith(between)
    inside = "w1 frozen 100 ms before your statement 2, inside its 200 ms lease; w2 came at 50 ms:"
    assert inside in verdict.message
    assert "statement 1," not in verdict.message


def test_a_race_that_failed_by_itself_gives_no_verdict_and_runs_no_more(monkeypatch):
    lab = Lab(monkeypatch, race(ONE_WINNER), race(REFUSED_LATE, failure="w2 timed out"))
    verdict = lesson6.claim_statement.check(CLAIM)
    assert len(lab.asked) == 2
    assert (verdict.status, verdict.run_dir) == ("no verdict", "/runs/2")
    assert verdict.message == (
        f"the race '{PAST}' failed (w2 timed out), so it says nothing about your answer:"
        " check again"
    )


def test_a_race_that_ends_wrong_says_what_the_files_held_and_how_it_must_end(monkeypatch):
    both = files(34, [("w1", 33), ("w2", 34)])
    lab = Lab(monkeypatch, race(both), race(ONE_WINNER))
    verdict = lesson6.claim_statement.check(CLAIM)
    assert len(lab.asked) == 1
    assert (verdict.status, verdict.run_dir) == ("incorrect", "/runs/1")
    assert verdict.message == (
        f"{HELD}: tokens claimed: w1 33, w2 34; the receiver applied 2 write(s) and refused 0;"
        " the document ends under token 34: both ran (both workers claimed the task and both"
        " wrote: the effect happened twice), where it must end one winner"
    )


def test_a_claim_between_statements_past_the_lease_must_let_w2_take_over(monkeypatch):
    lab = Lab(
        monkeypatch,
        race(ONE_WINNER, events=points(1, 2)),
        race(REFUSED_LATE),
        race(REFUSED_LATE),
        race(ONE_WINNER),
        race(ONE_WINNER),
        race(ONE_WINNER),
        race(files(33, [("w1", 33)]), {"w1": {"claimed": True, "fence": 33}, "w2": {}}),
    )
    verdict = lesson6.claim_statement.check(CLAIM)
    assert len(lab.asked) == 7 and lab.asked[6][-1] == "claim statement 2"
    assert (verdict.status, verdict.run_dir) == ("incorrect", "/runs/7")
    assert verdict.message == (
        "w1 frozen 300 ms before your statement 2, past its 200 ms lease; w2 came at 200 ms,"
        " when now = lease_until: tokens claimed: w1 33, w2 none; the receiver applied 1"
        " write(s) and refused 0; the document ends under token 33: w2 came past w1's lease"
        " and could not claim the task: a claim whose lease has run out (or was never set)"
        " must let another worker take over"
    )


def test_a_claim_that_returns_another_token_than_it_wrote_is_told_both(monkeypatch):
    wrote_33 = files(33, [("w1", 34)])
    Lab(monkeypatch, race(wrote_33, {"w1": {"claimed": True, "fence": 34}, "w2": {}}))
    verdict = lesson6.claim_statement.check(CLAIM)
    assert verdict.status == "incorrect"
    assert verdict.message == (
        f"{HELD}: your claim returned token 34, but the task row holds 33: return the token your"
        " claim wrote"
    )


@pytest.mark.parametrize("token", ["33", 33.0, True, None])
def test_a_claim_that_returns_no_whole_number_is_told_what_it_returned(monkeypatch, token):
    """`str(row[0])` returned "33", which a message prints as 33, beside a row that holds 33:
    said as it is. A string beside an int no longer reaches sorted(), which raised."""
    one = files(33, [("w1", 33)])
    reports = {"w1": {"claimed": True, "fence": token}, "w2": {"claimed": True, "fence": 34}}
    Lab(monkeypatch, race(one, reports))
    verdict = lesson6.claim_statement.check(CLAIM)
    assert verdict.status == "incorrect"
    assert verdict.message == (
        f"{HELD}: your claim returned {token!r}, not a whole number: return the token itself,"
        " as the task row holds it"
    )


def test_a_claim_whose_tokens_are_not_each_the_next_is_told_which_they_must_be(monkeypatch):
    """The lab's time as the token: w1 claims 0 at 0 ms; a token skipped: w2 claims 35."""
    timed = files(0, [("w1", 0)])
    Lab(monkeypatch, race(timed, {"w1": {"claimed": True, "fence": 0}, "w2": {}}))
    verdict = lesson6.claim_statement.check(CLAIM)
    assert (verdict.status, verdict.run_dir) == ("incorrect", "/runs/1")
    assert verdict.message == (
        f"{HELD}: tokens claimed: w1 0, w2 none; the receiver applied 1 write(s) and refused 0;"
        " the document ends under token 0: each claim takes the next token, one more than the"
        " task row's, which starts at 32: the tokens claimed must be 33"
    )
    skipped = files(35, [("w2", 35)], [("w1", 33, 35)])
    said = {"w1": {"claimed": True, "fence": 33}, "w2": {"claimed": True, "fence": 35}}
    Lab(monkeypatch, race(ONE_WINNER), race(skipped, said))
    assert lesson6.claim_statement.check(CLAIM).message == (
        f"{PAST}: tokens claimed: w1 33, w2 35; the receiver applied 1 write(s) and refused 1;"
        " the document ends under token 35: each claim takes the next token, one more than the"
        " task row's, which starts at 32: the tokens claimed must be 33, then 34"
    )


def test_a_lease_not_counted_from_the_claims_time_is_told_when_it_must_end(monkeypatch):
    """lease_until = lease_ms: right for w1's claim at 0 ms, 200 ms short for w2's at 200."""
    short = files(34, [("w2", 34)], [("w1", 33, 34)], lease=200)
    Lab(monkeypatch, race(ONE_WINNER), race(short))
    verdict = lesson6.claim_statement.check(CLAIM)
    assert (verdict.status, verdict.run_dir) == ("incorrect", "/runs/2")
    assert verdict.message == (
        f"{PAST}: w2 claimed at 200 ms, but the task row's lease runs until 200: a claim sets"
        " lease_until = now + lease_ms, 400 here"
    )
    Lab(monkeypatch, race(files(33, [("w1", 33)], lease=100)))
    assert lesson6.claim_statement.check(CLAIM).message == (
        f"{HELD}: w1 claimed at 0 ms, but the task row's lease runs until 100: a claim sets"
        " lease_until = now + lease_ms, 200 here"
    )


def test_a_claim_that_returned_the_newest_token_written_passes(monkeypatch):
    """Both claimed, the newest token is the task's: the lower one is not held against it."""
    Lab(monkeypatch, race(ONE_WINNER, {"w1": {"claimed": True, "fence": 32}, "w2": {}}))
    monkeypatch.setattr(lesson6, "CLAIM_CASES", lesson6.CLAIM_CASES[:1])
    assert lesson6.claim_statement.check(CLAIM).status == "incorrect"
    Lab(monkeypatch, race(ONE_WINNER, {"w1": {"claimed": True, "fence": 33}, "w2": {}}))
    assert lesson6.claim_statement.check(CLAIM).status == "correct"
    nobody = {"w1": {"claimed": False, "fence": 40}, "w2": {}}
    Lab(monkeypatch, race(ONE_WINNER, nobody, outcome="one_winner"))
    assert lesson6.claim_statement.check(CLAIM).status == "correct"  # no token returned


def test_the_readers_error_in_a_worker_is_an_error_at_their_line(monkeypatch):
    stderr = (
        'Traceback (most recent call last):\n  File "<your claim>", line 2, in claim\n'
        "NameError: name 'x' is not defined\n"
    )
    failed = {"w1": worker("w1"), "w2": worker("w2", 1, stderr)}
    Lab(monkeypatch, race(ONE_WINNER, workers=failed))
    verdict = lesson6.claim_statement.check(CLAIM)
    assert verdict.status == "error" and verdict.run_dir == "/runs/1"
    assert "NameError: name 'x' is not defined" in verdict.message
    assert "line 2: return None" in verdict.message


def test_a_right_receiver_runs_its_four_schedules_under_a_plain_lease(monkeypatch):
    again = files(33, [("w1", 33), ("w1", 33)])
    lab = Lab(
        monkeypatch,
        race(REFUSED_LATE, events=points(1, part="receive")),
        race(ONE_WINNER),
        race(again, {"w1": {"claimed": True, "fence": 33}, "w2": {}}),
        race(CORRECTED),
    )
    verdict = lesson6.fenced_receiver.check(RECEIVE)
    assert lab.asked == [
        ("lease", 300, 200, 200, True, 1, None),
        ("lease", 100, 200, 50, True, 1, None),
        ("lease", 100, 200, 50, True, 2, None),
        ("lease", 300, 200, 200, True, 2, "before write 2"),
    ]
    assert lab.sources == (None, RECEIVE)
    assert verdict.status == "correct"
    assert verdict.message == (
        "4 forced races, each as it must end: w1 frozen 300 ms, past its lease; w2 wrote under"
        " 34 first: refused late write; w1 frozen 100 ms, its lease still held: nobody else"
        " wrote: one winner; w1 frozen 100 ms, its lease still held, then wrote twice under its"
        f" token 33 (its report, then a correction): nobody else wrote: both ran; {CORRECTING}:"
        " both ran"
    )


def test_a_receiver_that_says_written_for_a_refusal_after_a_write_is_told_so(monkeypatch):
    """`db.total_changes > 0`: right until the connection has written once; w1's correction,
    refused after its report was accepted, is said written."""
    report = {"applied": True, "said_written": True, "returned": "True"}
    correction = {"applied": False, "said_written": True, "returned": "True"}
    w1 = {"claimed": True, "fence": 33, "writes": [report, correction]}
    w2 = {"claimed": True, "fence": 34, "writes": [report, report]}
    again = files(33, [("w1", 33), ("w1", 33)])
    lab = Lab(
        monkeypatch,
        race(REFUSED_LATE),
        race(ONE_WINNER),
        race(again),
        race(CORRECTED, {"w1": w1, "w2": w2}),
    )
    verdict = lesson6.fenced_receiver.check(RECEIVE)
    assert len(lab.asked) == 4
    assert (verdict.status, verdict.run_dir) == ("incorrect", "/runs/4")
    assert verdict.message == (
        f"{CORRECTING}: tokens claimed: w1 33, w2 34; the receiver applied 3 write(s) and"
        " refused 1; the document ends under token 34: your receiver returned True for w1's"
        " write under token 33, but that write never reached the document: return False when you"
        " refused"
    )


def test_a_receiver_frozen_between_its_statements_is_run_past_the_lease(monkeypatch):
    lab = Lab(
        monkeypatch,
        race(REFUSED_LATE, events=points(1, 2, part="receive")),
        race(ONE_WINNER),
        race(files(33, [("w1", 33), ("w1", 33)])),
        race(CORRECTED),
        race(ONE_WINNER),  # w1's late write landed, unrefused: it must have been refused
    )
    verdict = lesson6.fenced_receiver.check(RECEIVE)
    assert lab.asked[4] == ("lease", 300, 200, 200, True, 1, "receive statement 2")
    assert (verdict.status, verdict.run_dir) == ("incorrect", "/runs/5")
    assert verdict.message.startswith(
        "w1 frozen 300 ms before your statement 2, past its lease; w2 wrote under 34 meanwhile:"
    )


def test_a_receiver_frozen_after_its_write_may_end_with_both_writes(monkeypatch):
    """Frozen before a statement after its write (SQLite's changes()), w1's write under 33
    landed first and w2's under 34 over it: both ran, as they must (it was refused)."""
    lab = Lab(
        monkeypatch,
        race(REFUSED_LATE, events=points(1, 2, part="receive")),
        race(ONE_WINNER),
        race(files(33, [("w1", 33), ("w1", 33)])),
        race(CORRECTED),
        race(files(34, [("w1", 33), ("w2", 34)], lease=400)),
    )
    verdict = lesson6.fenced_receiver.check(RECEIVE)
    assert lab.asked[4][-1] == "receive statement 2"
    assert verdict.status == "correct", str(verdict)
    assert verdict.message.endswith(
        "w1 frozen 300 ms before your statement 2, past its lease; w2 wrote under 34 meanwhile:"
        " both ran"
    )


def written(fence: int, applied: bool, said: bool, returned: object) -> dict:
    write = {"applied": applied, "said_written": said, "returned": returned}
    return {"claimed": True, "fence": fence, "writes": [write]}


TOLD_LATE = (
    "tokens claimed: w1 33, w2 34; the receiver applied 1 write(s) and refused 1; the document"
    " ends under token 34"
)
RECEIVER_PAST = "w1 frozen 300 ms, past its lease; w2 wrote under 34 first"


@pytest.mark.parametrize(
    ("w1", "says"),
    [
        (
            written(33, True, False, None),
            f"{RECEIVER_PAST}: {TOLD_LATE}: your receiver returned None for w1's write under"
            " token 33, but that write reached the document: return True when you wrote",
        ),
        (
            written(33, False, True, 1),
            f"{RECEIVER_PAST}: {TOLD_LATE}: your receiver returned 1 for w1's write under token"
            " 33, but that write never reached the document: return False when you refused",
        ),
    ],
)
def test_a_receivers_answer_the_file_belies_is_named_with_its_write(monkeypatch, w1, says):
    right = {"claimed": True, "fence": 34, "writes": [{"applied": True, "said_written": True}]}
    Lab(monkeypatch, race(REFUSED_LATE, {"w2": right, "w1": w1}))
    verdict = lesson6.fenced_receiver.check(RECEIVE)
    assert (verdict.status, verdict.message) == ("incorrect", says)


def test_a_refusal_of_an_equal_or_higher_token_is_wrong_and_of_a_lower_one_right(monkeypatch):
    said = {"w1": {"claimed": True, "fence": 33}, "w2": {"claimed": True, "fence": 34}}
    equal = files(34, [("w2", 34)], [("w1", 34, 34)])
    Lab(monkeypatch, race(equal, said))
    verdict = lesson6.fenced_receiver.check(RECEIVE)
    assert (verdict.status, verdict.message) == (
        "incorrect",
        f"{RECEIVER_PAST}: {TOLD_LATE}: your receiver refused a write under token 34 although"
        " the highest token it had accepted was 34: refuse only a lower token (an equal one is"
        " the same holder's next write)",
    )
    Lab(monkeypatch, race(files(34, [("w2", 34)], [("w1", 35, 34)]), said))
    assert "under token 35 although" in lesson6.fenced_receiver.check(RECEIVE).message
    monkeypatch.setattr(lesson6, "RECEIVER_CASES", lesson6.RECEIVER_CASES[:1])
    Lab(monkeypatch, race(REFUSED_LATE, said))
    assert lesson6.fenced_receiver.check(RECEIVE).status == "correct"


def test_a_receivers_error_is_shown_at_its_line_in_the_receiver(monkeypatch):
    stderr = (
        'Traceback (most recent call last):\n  File "<your receiver>", line 2, in receive\n'
        "ZeroDivisionError: division by zero\n"
    )
    failed = {"w1": worker("w1", 1, stderr), "w2": worker("w2")}
    Lab(monkeypatch, race(REFUSED_LATE, workers=failed))
    verdict = lesson6.fenced_receiver.check(RECEIVE)
    assert verdict.status == "error" and verdict.run_dir == "/runs/1"
    assert verdict.message == (
        "your code raised ZeroDivisionError: division by zero, at line 2: return True\n"
        "Mend it and check again."
    )


@pytest.mark.parametrize(
    ("exercise", "answer", "expects"),
    [
        (
            lesson6.claim_statement,
            CLAIM,
            "the lab goes on with the token your claim returns: a whole number, or None",
        ),
        (
            lesson6.fenced_receiver,
            RECEIVE,
            "the lab notes in receiver.db what your receiver did once it returns: end every"
            " transaction you begin, and return True or False",
        ),
    ],
    ids=["claim", "receive"],
)
def test_the_labs_own_line_failing_after_the_readers_code_says_what_the_lab_expects(
    monkeypatch, exercise, answer, expects
):
    stderr = (
        'Traceback (most recent call last):\n  File "worker.py", line 90, in run\n'
        "TypeError: '>' not supported between instances of 'str' and 'int'\n"
    )
    Lab(monkeypatch, race(ONE_WINNER, workers={"w1": worker("w1", 1, stderr)}))
    verdict = exercise.check(answer)
    assert (verdict.status, verdict.run_dir) == ("incorrect", "/runs/1")
    assert verdict.message == (
        f"{expects} (the lab's own code failed after yours returned: TypeError: '>' not"
        " supported between instances of 'str' and 'int')"
    )
