"""Lesson 6 · Two workers, one task (notebooks/06_two_workers_one_task.ipynb): its checked
exercises. Each check runs real races: two worker processes, the first frozen by SIGSTOP at a
point the lab picks (after its claim, between its report and a correction, and between any two
of your statements that run outside a transaction), the lab's clock moved past its lease or
not, then thawed; the files say what happened, and a receiver's every answer is held against
them.

    lesson6.claim_statement.check(claim)     # .hint(), .solution()
    lesson6.fenced_receiver.check(receive)

What the verdicts and hints say is in the catalogue, `lesson6.toml`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from labkit.language import say
from labkit.studies.leases.experiment import ClaimResult, execute_claim
from labkit.studies.leases.outcome import OUTCOMES
from labkit.studies.leases.spec import ClaimSpec
from labkit.studies.leases.stores import FIRST_FENCE
from labkit.studies.leases.worker import CLAIM_FILE, RECEIVE_FILE, statement_point, write_point
from labkit.workshop.checks import Exercise, Verdict, check_worker, no_verdict, source_of

__all__ = ["claim_statement", "fenced_receiver"]

LEASE = 200
NEVER = "never"  # a point no worker passes: the first runs to its end before the second comes
EXERCISES = {"claim": "claim_statement", "receive": "fenced_receiver"}  # each part's exercise


@dataclass(frozen=True)
class Case:
    """One forced schedule a check runs, and the outcomes a right answer may give there."""

    name: str  # its words' key in lesson6.toml's [case]
    pause_ms: int
    expected: tuple[str, ...]
    stop_at: str | None = None  # None: the method's usual point (after the claim)
    writes: int = 1  # how often each worker writes its report (2: a correction, same token)
    taken_over: bool = False  # w2 comes past w1's lease: it must claim the task
    arrival: int | None = None  # when w2 comes, if not when the spec's rule says (arrival_ms)

    @property
    def statement(self) -> str:
        """The number of the reader's statement it freezes before, if it names one
        ("claim statement 2" is "2"; see `statement_point`), else ""."""
        return (self.stop_at or "").partition(" statement ")[2]

    def spec(self, **more: object) -> ClaimSpec:
        """The race's spec: both workers under one name, as a restarted worker comes back."""
        return ClaimSpec(
            pause_ms=self.pause_ms,
            lease_ms=LEASE,
            same_name=True,
            writes=self.writes,
            arrives_ms=self.arrival,
            **more,
        )

    def says(self) -> str:
        """The schedule in the lesson's words, in the reader's language, with its times: w1
        claims at 0 ms, so its lease runs until {lease} ms; w2 comes at {arrival} ms."""
        return say(
            f"lesson6.case.{self.name}",
            pause=self.pause_ms,
            lease=LEASE,
            arrival=self.spec().arrival_ms,
            statement=self.statement,
        )


def readers_run(part: str, source: str, case: Case, **spec: object) -> ClaimResult:
    """One race with the reader's code; their error, if either worker died of it, as theirs."""
    result = execute_claim(case.spec(**spec), case.stop_at)
    file = CLAIM_FILE if part == "claim" else RECEIVE_FILE
    for worker in result.workers.values():
        check_worker(worker, source, file, result.run_dir, f"lesson6.{EXERCISES[part]}.expects")
    return result


def statements_outside(result: ClaimResult, part: str) -> list[str]:
    """The points before the first worker's statements that ran outside a transaction, but the
    first (a pause before anything was read changes nothing)."""
    points = [
        e["point"]
        for e in result.trace()
        if e["role"] == "w1"
        and e["event"] == "point"
        and e["point"].startswith(f"{part} statement ")
    ]
    return [p for p in points if p != statement_point(part, 1)]


def told(result: ClaimResult) -> str:
    """What the files hold after a race, in a line."""
    none = say("checks.words.none")
    tokens = {
        r: rep.get("fence") if rep.get("claimed") else none for r, rep in result.reports.items()
    }
    counts = result.counts
    return say(
        "lesson6.told",
        w1=tokens["w1"],
        w2=tokens["w2"],
        applied=counts["applied"],
        refused=counts["refused"],
        fence=counts["document_fence"],
    )


def judge_cases(
    part: str, answer: Callable | str, cases: list[Case], between: list[Case], **spec: object
) -> Verdict:
    """Run each case, then each of `between` once for each of the reader's statements (but the
    first) that any race saw run outside a transaction; the first race that does not end as it
    must is the verdict, and the races after it are not run."""
    source, _ = source_of(answer)
    spec[f"{part}_source"] = source
    done: list[tuple[Case, ClaimResult]] = []
    planned, explored = list(cases), set()
    while planned:
        case = planned.pop(0)
        result = readers_run(part, source, case, **spec)
        planned += [  # each race may show statements of theirs that no race has frozen at
            replace(schedule, stop_at=point)
            for point in statements_outside(result, part)
            if point not in explored
            for schedule in between
        ]
        explored.update(statements_outside(result, part))
        done.append((case, result))
        if result.failure:
            race = say("lesson6.race", case=case.says())
            return no_verdict(race, result.failure, str(result.run_dir))
        wrong = what_went_wrong(part, case, result)
        if wrong:
            said = say("lesson6.case_wrong", case=case.says(), wrong=wrong)
            return Verdict("incorrect", said, str(result.run_dir))
    races = say("lesson6.separator").join(
        say("lesson6.race_ended", case=c.says(), outcome=named(r.outcome)) for c, r in done
    )
    said = say("lesson6.correct", count=len(done), races=races)
    return Verdict("correct", said, str(done[0][1].run_dir))


def named(outcome: str) -> str:
    """A race's outcome as a verdict names it: "lost update" for lost_update (the lesson's
    views name it so too)."""
    return say(f"leases.name.{outcome}")


def what_went_wrong(part: str, case: Case, result: ClaimResult) -> str | None:
    """Why this race's end is wrong, in the lesson's words, or None: (a receiver) it wrote
    exactly when no higher token had been accepted, and said so; the outcome a right answer
    gives; (a claim) the tokens it returned are the ones it wrote, each the next, and its
    lease runs from its time."""
    if part == "receive":
        wrong = wrong_answer(result) or wrong_refusal(result)
        if wrong:
            return wrong
    if result.outcome not in case.expected:
        return say(
            "lesson6.ends_wrong",
            told=told(result),
            outcome=named(result.outcome),
            meaning=OUTCOMES[result.outcome],
            expected=say("lesson6.or").join(map(named, case.expected)),
        )
    if case.taken_over and not result.reports["w2"].get("claimed"):
        return say("lesson6.not_taken_over", told=told(result))
    if part == "claim":
        return token_wrong(result) or lease_wrong(result)
    return None


def token_wrong(result: ClaimResult) -> str | None:
    """The claims' tokens held against the task row: the newest must be the one it holds, and
    each the next, one more than the token before it (32 to start: 33, then 34)."""
    task_fence = result.after.table("task").rows[0][3]
    returned = [r.get("fence") for r in result.reports.values() if r.get("claimed")]
    for token in returned:  # "33" prints as 33: said as it is, before any comparison
        if not isinstance(token, int) or isinstance(token, bool):
            return say("lesson6.token_not_a_number", returned=repr(token))
    tokens = sorted(returned)
    if tokens and tokens[-1] != task_fence:
        return say("lesson6.token_not_written", returned=tokens[-1], held=task_fence)
    next_tokens = list(range(FIRST_FENCE + 1, FIRST_FENCE + 1 + len(tokens)))
    if tokens != next_tokens:
        expected = say("lesson6.then").join(map(str, next_tokens))
        return say(
            "lesson6.token_not_next", told=told(result), first=FIRST_FENCE, expected=expected
        )
    return None


def lease_wrong(result: ClaimResult) -> str | None:
    """The task row's lease held against the claim that holds the task: now + lease_ms, from
    the time that claim was made (w1 claims at 0 ms, where lease_ms alone looks right too; w2
    when it comes)."""
    _id, _state, _owner, fence, lease_until = result.after.table("task").rows[0]
    claimed_at = {"w1": 0, "w2": result.spec.arrival_ms}
    for role, report in result.reports.items():
        expected = claimed_at[role] + result.spec.lease_ms
        if report.get("claimed") and report.get("fence") == fence and lease_until != expected:
            return say(
                "lesson6.lease_not_from_now",
                worker=role,
                now=claimed_at[role],
                held=lease_until,
                expected=expected,
            )
    return None


def wrong_answer(result: ClaimResult) -> str | None:
    """The first write whose answer (True if written, False if refused) the file belies."""
    for role, report in result.reports.items():
        for write in report.get("writes", []):
            if write["said_written"] != write["applied"]:
                done = "written" if write["applied"] else "refused"
                return say(
                    f"lesson6.answer_{done}",
                    told=told(result),
                    worker=role,
                    fence=report["fence"],
                    returned=write["returned"],
                )
    return None


def wrong_refusal(result: ClaimResult) -> str | None:
    """A write the receiver refused although its token was not lower than the highest it had
    accepted (an equal token is the same holder's: a second write, a retry)."""
    for _seq, _writer, fence, highest in result.after.table("refused").rows:
        if fence >= highest:
            return say("lesson6.refused_equal", told=told(result), fence=fence, highest=highest)
    return None


# --- exercise 1: the claim ------------------------------------------------------------------

CLAIM_CASES = [
    Case("held", 100, ("one_winner",)),
    Case("past_lease", 300, ("refused_late_write",)),
    Case("just_expired", 200, ("refused_late_write",)),
    Case("lease_ending", 300, ("one_winner",), arrival=LEASE - 1),  # a margin takes it early
    Case("finished", 300, ("one_winner",), NEVER),
]


# Frozen before a statement of theirs: inside the lease, w2 must be refused; past it, w2 takes
# over, and w1's write is refused if it had claimed before the freeze (else it never claims).
CLAIM_BETWEEN = [
    Case("claim_between", 100, ("one_winner",)),
    Case("claim_between_past", 300, ("one_winner", "refused_late_write"), taken_over=True),
]


def judge_claim(answer: Callable | str) -> Verdict:
    return judge_cases("claim", answer, CLAIM_CASES, CLAIM_BETWEEN, method="lease_with_fence")


claim_statement = Exercise(
    "lesson6.claim_statement",
    "06_claim_statement.py",
    starter="""def claim(db, me, now, lease_ms):
    # db: tasks.db (autocommit); task(id, state, owner, fence, lease_until), one row 'job-17'.
    # A lease is held while now < lease_until. Return the token you claimed, or None.
    state, fence = db.execute("SELECT state, fence FROM task WHERE id='job-17'").fetchone()
    if state != "open":
        return None
    db.execute(
        "UPDATE task SET state='claimed', owner=?, fence=?, lease_until=? WHERE id='job-17'",
        (me, fence + 1, now + lease_ms),
    )
    return fence + 1""",
    judge=judge_claim,
    code=True,
)


# --- exercise 2: the fence check in the receiver --------------------------------------------

RECEIVER_CASES = [
    Case("receiver_past", 300, ("refused_late_write",)),
    Case("receiver_held", 100, ("one_winner",)),
    Case("receiver_again", 100, ("both_ran",), writes=2),  # an equal token: both writes apply
    # w1's report accepted, its correction refused: the one connection has written before
    Case("receiver_corrected", 300, ("both_ran",), write_point(2), writes=2),
]


# Frozen before a statement of theirs: a write it made before the freeze (a statement after the
# write asks SQLite's changes()) landed first, and w2's over it: both ran; a write it makes after
# the thaw must be refused.
RECEIVER_BETWEEN = [Case("receiver_between", 300, ("refused_late_write", "both_ran"))]


def judge_receiver(answer: Callable | str) -> Verdict:
    return judge_cases("receive", answer, RECEIVER_CASES, RECEIVER_BETWEEN, method="lease")


fenced_receiver = Exercise(
    "lesson6.fenced_receiver",
    "06_fenced_receiver.py",
    starter="""def receive(db, writer, fence, body):
    # db: receiver.db (autocommit); document(id, body, writer, fence), one row 'report-17'.
    # Write unless a higher token has been accepted; True if written, False if refused.
    db.execute(
        "UPDATE document SET body=?, writer=?, fence=? WHERE id='report-17'",
        (body, writer, fence),
    )
    return True""",
    judge=judge_receiver,
    code=True,
)
