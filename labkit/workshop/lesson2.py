"""Lesson 2 · Closing the window (notebooks/02_closing_the_window.ipynb): its checked exercises.

The step exercises run the reader's step where the lab runs its own and kill it after every
commit and every write that reached a file of its run folder, however it was written (a step
that writes outside it is refused); the worker's own reports (exit codes, stderr, the files)
tell a wrong step from an error in the reader's code, shown at their line.

    lesson2.safe_step.check(my_step)   # .hint(), .solution()

The tool checklist (study 000's three questions) is judged against real crashes of the lab's
own steps: each crashed in its window and retried in a fresh process.

What the verdicts and hints say is in the catalogue, `lesson2.toml`.
"""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Callable

from labkit.bench.gate import EXIT_CODE
from labkit.bench.snapshot import read_only
from labkit.bench.trace import read_trace
from labkit.language import LANGUAGES, catalogue, say
from labkit.studies.commit_window.expired_key import (
    HOUR,
    LONGEST_DELAY,
    ExpiredKeyRun,
    run_expired_key,
)
from labkit.studies.commit_window.learner import LEARNER_FILE
from labkit.studies.commit_window.orders import STUDY_000_CASES
from labkit.studies.commit_window.runs import RunResult, execute, run
from labkit.studies.commit_window.spec import RunSpec
from labkit.studies.commit_window.stores import PAYLOAD
from labkit.studies.commit_window.tool_runs import run_tool_step
from labkit.studies.commit_window.tool_steps import JOBS
from labkit.views.commit_window_words import describe_state
from labkit.workshop.checks import (
    Exercise,
    Form,
    Measured,
    ReaderCodeError,
    Verdict,
    case_name,
    each,
    judge_predictions,
    lone,
    no_verdict,
    one_of,
    read_whole_number,
    source_of,
    word,
    worker_error,
    written_count,
)

__all__ = ["bug_hunt", "predict_five_cases", "safe_step", "shortest_ttl", "tool_checklist"]


def study_000_case(case: str) -> Measured:
    """One case of study 000 ("order/point"): a real crash and recovery, and its outcome."""

    r = run(*case.split("/"))
    story = say(
        "lesson2.case_story",
        before_done=r.before.done,
        before_receipts=r.before.receipts,
        after_done=r.after.done,
        after_receipts=r.after.receipts,
    )
    return Measured(r.outcome, story, str(r.run_dir), r.failure)


def judge_five_cases(predicted: object) -> Verdict:
    """Each of study 000's cases the reader predicted, crashed and recovered for real."""

    cases = [f"{order}/{point}" for order, point in STUDY_000_CASES]
    outcome = one_of("consistent", "duplicate", "lost")
    return judge_predictions(predicted, cases, each(study_000_case), outcome)


KILLED = (0, EXIT_CODE, -signal.SIGKILL)  # a first worker's end: clean, or killed as planned


def unwatched(run: RunResult) -> str | None:
    """Why the check could not kill a run's step after each of its commits, if it could not:
    commits it saw only together, a file in WAL mode, a changed file with no commit seen."""
    trace = read_trace(run.run_dir)
    for event in trace:
        if event["event"] != "unwatched" or event["role"] != "first":
            continue
        files = say("checks.words.and").join(event["files"])
        if event.get("reason") in ("wal", "uncounted"):
            return say(f"lesson2.step.{event['reason']}", files=files)
        return say("lesson2.step.together", commits=event["commits"], files=files)
    created = json.loads(json.dumps(next(e["rows"] for e in trace if e["event"] == "created")))
    commits = [
        e["point"]
        for e in trace
        if e["event"] == "point" and e["role"] == "first" and e["point"].startswith("after commit")
    ]
    for name, rows in run.before.rows.items():
        if rows != created[name] and not any(name in point for point in commits):
            return say("lesson2.step.no_commit_seen", name=name)
    return None


# The gate's name for the point after a commit or a write: "after write 1 (sent.json)"
AFTER_POINT = re.compile(r"after (commit|write) (\d+) \((.+)\)")


def point_words(point: str) -> str:
    """A kill point the gate named ("start", "after commit 1 (effect.db)", "after write 1
    (sent.json)") in the reader's words, from its number and file."""
    after = AFTER_POINT.fullmatch(point)
    if after:
        return say(f"lesson2.point.after_{after[1]}", number=after[2], file=after[3])
    return say("lesson2.point.start") if point == "start" else point


def written_outside(run: RunResult) -> str | None:
    """The files a run's step wrote outside its run folder, in words, if it wrote any."""
    files = [e["file"] for e in read_trace(run.run_dir) if e["event"] == "outside"]
    return say("checks.words.and").join(dict.fromkeys(files)) or None


def judge_step(answer: Callable | str) -> Verdict:
    """Run the step once uncrashed, then kill it at every point its run passed (after every
    commit and every write that reached a file of its run folder) and recover: every run must
    end with done=1 and one receipt. A step that writes outside its run folder is refused."""

    source, name = source_of(answer)

    def run(point: str = "none"):  # noqa: ANN202 - a RunResult
        return execute(RunSpec("idempotent", point, step_source=source, step_name=name))

    clean = run()
    error = worker_error(clean.first, source, LEARNER_FILE)
    if error:
        raise ReaderCodeError(error, str(clean.run_dir))
    outside = written_outside(clean)  # before all else: what it left there, a run finds again
    if outside:
        said = say("lesson2.step.outside", files=outside)
        return Verdict("incorrect", said, str(clean.run_dir))
    receipts = clean.before.table("receipts").rows
    if (clean.before.done, len(receipts)) != (1, 1) or receipts[0][2] != PAYLOAD:
        state = describe_state(clean.before)
        said = say("lesson2.step.clean_run", state=state, receipts=receipts)
        return Verdict("incorrect", said, str(clean.run_dir))
    why = unwatched(clean)
    if why:
        return Verdict("incorrect", say("lesson2.step.unwatched", why=why), str(clean.run_dir))
    trace = read_trace(clean.run_dir)
    points = [e["point"] for e in trace if e["event"] == "point" and e["role"] == "first"]
    for point in points:
        r = run(point)
        at = say("lesson2.step.killed_at", point=point_words(point), state=describe_state(r.before))
        if r.first.exit_code != EXIT_CODE:
            why = worker_error(r.first, source, LEARNER_FILE, KILLED) or say(
                "lesson2.step.not_reached"
            )
            return Verdict("incorrect", say("lesson2.step.not_the_same", at=at, why=why))
        error = worker_error(r.recovery, source, LEARNER_FILE)
        if error:
            said = say("lesson2.step.recovery_failed", at=at, error=error)
            return Verdict("incorrect", said, str(r.run_dir))
        if (r.after.done, r.after.receipts) != (1, 1):
            said = say("lesson2.step.not_safe", at=at, state=describe_state(r.after))
            return Verdict("incorrect", said, str(r.run_dir))
    words = say("checks.words.comma").join(map(point_words, points))
    said = say("lesson2.step.correct", count=len(points), points=words)
    return Verdict("correct", said, str(clean.run_dir))


BUGGY_STEP_STARTER = """def buggy_step(control, effect, gate):
    import uuid

    key = f"job-17:save-report:{uuid.uuid4()}"
    with effect:
        effect.add_receipt_once(key, PAYLOAD)
    with control:
        control.mark_done()"""

predict_five_cases = Exercise(
    "lesson2.predict_five_cases",
    "02_predict_five_cases.py",
    starter="""predictions = {
    "effect_first/effect": "???",
    "checkpoint_first/checkpoint": "???",
    "atomic/in_transaction": "???",
    "atomic/committed": "???",
    "idempotent/effect": "???",
}""",
    judge=judge_five_cases,
)

safe_step = Exercise(
    "lesson2.safe_step",
    "02_safe_step.py",
    starter="""def my_step(control, effect, gate):
    with effect:
        effect.add_receipt(KEY, PAYLOAD)
    with control:
        control.mark_done()""",
    judge=judge_step,
    code=True,
)

bug_hunt = Exercise(
    "lesson2.bug_hunt",
    "02_bug_hunt.py",
    starter=BUGGY_STEP_STARTER,
    judge=judge_step,
    code=True,
)


# The tool checklist: study 000's three questions, for three of the lab's own steps, each
# crashed where its window is and retried in a fresh process.
CHECKLIST_STEPS = {"effect_first": "effect", "idempotent": "effect", "queue_pop": "popped"}
QUESTIONS = ("idempotent", "key", "on_retry")
RETRY_WORDS = ("duplicate", "original", "next job")
ON_RETRY = one_of(*RETRY_WORDS)


def read_checklist_answer(value: object) -> str | None:
    """yes or no (True, False), none (no key), one of the retry words, or else a key as given."""
    value = lone(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    said = word(value)
    if said is None or not said:
        return None
    if said in ("yes", "no", "none"):
        return said
    if said == "no key":
        return "none"
    return ON_RETRY.read(value) or value.strip()


CHECKLIST_ANSWER = Form(
    "lesson2.tool_checklist.form", read_checklist_answer, {"words": ", ".join(RETRY_WORDS)}
)


def receiver_key(run_dir: str, file: str) -> str:
    """The key the receiver recognises a retry by: the op_key of its receipt, if the receipts
    table holds a UNIQUE index on op_key (read from the file's schema); else none."""
    with read_only(f"{run_dir}/{file}") as db:
        unique = db.execute(
            "SELECT 1 FROM sqlite_master WHERE type='index' AND tbl_name='receipts'"
            " AND sql LIKE '%UNIQUE%op_key%'"
        ).fetchone()
        row = db.execute("SELECT op_key FROM receipts").fetchone()
    return row[0] if unique and row else "none"


def answer_step(step: str) -> dict[str, Measured]:
    """One real crash in the step's window and a retry; the three answers it shows."""
    point = CHECKLIST_STEPS[step]
    if step == "queue_pop":
        r = run_tool_step(step, point)
        run_dir, file, failure = str(r.run_dir), "control.db", r.failure
        receipts = [row[2] for row in r.after.table("receipts").rows]
        retry = "next job" if receipts and receipts != [JOBS[0]] else "original"
        story = say("lesson2.tool_checklist.popped_story", receipts=receipts, job=JOBS[0])
    else:
        r = run(step, point)
        run_dir, file, failure = str(r.run_dir), r.spec.write_order.files[-1], r.failure
        retry = "duplicate" if r.after.receipts > 1 else "original"
        story = say(
            "lesson2.tool_checklist.retry_story", before=r.before.receipts, after=r.after.receipts
        )
    answers = {
        "idempotent": "yes" if retry == "original" else "no",
        "key": receiver_key(run_dir, file),
        "on_retry": retry,
    }
    return {q: Measured(answers[q], story, run_dir, failure) for q in QUESTIONS}


def measure_checklist(cases: list[str]) -> dict[str, Measured]:
    """Each step asked about is crashed and retried once, whatever it is asked."""
    steps = {case.split("/")[0] for case in cases}
    found = {step: answer_step(step) for step in CHECKLIST_STEPS if step in steps}
    return {case: found[case.split("/")[0]][case.split("/")[1]] for case in cases}


CHECKLIST_CASES = [f"{step}/{q}" for step in CHECKLIST_STEPS for q in QUESTIONS]


def judge_checklist(answers: object) -> Verdict:
    """The checklist's answers against each step's real crash. A key given as None is "none",
    no key, as Python writes it (the starter's placeholder is "???"): not a part left open."""
    if isinstance(answers, dict):
        answers = {
            case: "none" if given is None and str(case_name(case)).endswith("/key") else given
            for case, given in answers.items()
        }
    return judge_predictions(answers, CHECKLIST_CASES, measure_checklist, CHECKLIST_ANSWER)


tool_checklist = Exercise(
    "lesson2.tool_checklist",
    "02_tool_checklist.py",
    starter="""checklist = {
    "effect_first/idempotent": "???",
    "effect_first/key": "???",
    "effect_first/on_retry": "???",
    "idempotent/idempotent": "???",
    "idempotent/key": "???",
    "idempotent/on_retry": "???",
    "queue_pop/idempotent": "???",
    "queue_pop/key": "???",
    "queue_pop/on_retry": "???",
}""",
    judge=judge_checklist,
)


DELAY_HOURS = 30  # shortest_ttl's longest recovery delay: a retry queue that gives up at 30 h


def ttl_run(ttl_hours: int) -> ExpiredKeyRun:
    """The idempotent step killed at `effect`, recovered DELAY_HOURS later, against a receiver
    that keeps keys `ttl_hours`."""
    return run_expired_key(DELAY_HOURS * HOUR, ttl=ttl_hours * HOUR)


def hour_units() -> set[str]:
    """The words for hours a TTL's count may have after it, in every language's catalogue:
    a reader may write either language's, whichever the lab speaks."""
    key = "lesson2.shortest_ttl.hour_units"
    return {unit for code in LANGUAGES for unit in catalogue(code)[key].split()}


def read_hours(value: object) -> int | None:
    """A TTL in whole hours, as a count is read (31, "31", 31.0, "31 h", "31 hours", "31 小时"),
    but a count in another unit is none: "31 minutes", "2 days" or "2 天" are not 31 or 2
    hours."""
    counted = written_count(value)
    if counted and counted[1] not in {"", *hour_units()}:
        return None
    return read_whole_number(value)


def judge_ttl(answer: object) -> Verdict:
    """Real crashes: the answer's TTL must leave one receipt, and one hour less must not. A
    run that failed by itself (a worker's own error, a timeout) gives no verdict."""
    hours = read_hours(answer)
    if not hours or hours * HOUR > LONGEST_DELAY:
        most = LONGEST_DELAY // HOUR
        return Verdict("incorrect", say("lesson2.shortest_ttl.form", given=repr(answer), most=most))
    kept = ttl_run(hours)
    if kept.outcome != "consistent" and not kept.failure:
        said = say(
            "lesson2.shortest_ttl.expired", ttl=hours, delay=DELAY_HOURS, receipts=kept.receipts
        )
        return Verdict("incorrect", said, str(kept.run_dir))
    shorter = ttl_run(hours - 1) if not kept.failure else kept  # hours > 1: 1 h expired above
    failed = next((r for r in (kept, shorter) if r.failure), None)
    if failed:
        ttl = round(failed.ttl / HOUR)
        return no_verdict(
            say("lesson2.shortest_ttl.run", ttl=ttl), failed.failure, str(failed.run_dir)
        )
    if shorter.outcome == "consistent":
        said = say("lesson2.shortest_ttl.longer", ttl=hours, shorter=hours - 1, delay=DELAY_HOURS)
        return Verdict("incorrect", said, str(shorter.run_dir))
    said = say(
        "lesson2.shortest_ttl.correct", ttl=hours, shorter=hours - 1, receipts=shorter.receipts
    )
    return Verdict("correct", said, str(kept.run_dir))


shortest_ttl = Exercise(
    "lesson2.shortest_ttl",
    "02_shortest_ttl.py",
    starter='ttl_hours = "???"',
    judge=judge_ttl,
    hint_fields={"delay": DELAY_HOURS},
)
