"""Lesson 9 · The crash explorer (notebooks/09_the_crash_explorer.ipynb): its checked exercise.

The judge is the explorer itself: it runs the reader's step once without a crash, crashes it
after every commit it made, recovers each crash state in a fresh process after each restart
(at once, a day later, in the next month and year, in a new interpreter: a key of the clock,
the pid or `hash()` changes there, as after a real restart) and checks every effect exactly
once. The matrix must be green.

    lesson9.green_matrix.check(report_step)   # .hint(), .solution()

What the verdicts and hints say is in the catalogue, `lesson9.toml`.
"""

from __future__ import annotations

from labkit.bench.errors import RunFailed
from labkit.bench.folders import new_run_dir, release_run_dir
from labkit.bench.launcher import WorkerReport
from labkit.language import say
from labkit.studies.commit_window.stores import PAYLOAD
from labkit.studies.explorer.replay import explore_spec
from labkit.studies.explorer.report import Exploration, PointResult
from labkit.studies.explorer.spec import ExploreSpec
from labkit.studies.explorer.target import READER_FILE, source_target
from labkit.views.explorer_words import (
    detail_words,
    failed_words,
    outcome_word,
    unwatched_words,
    verb,
    what_is_wrong,
)
from labkit.workshop.checks import (
    Exercise,
    ReaderCodeError,
    Verdict,
    no_verdict,
    source_of,
    worker_error,
)

__all__ = ["green_matrix"]


def explored(source: str, name: str) -> Exploration:
    """The explorer on the reader's step; their own error in the run without a crash is theirs."""
    folder = new_run_dir(None, "lesson9-")
    try:
        return explore_spec(ExploreSpec(source_target(source, name)), folder)
    except RunFailed:
        record = folder / "record"
        stderr = (record / "record.stderr").read_text() if record.exists() else ""
        if not stderr.strip():  # os._exit, a signal, a timeout: its status does not come here
            raise ReaderCodeError(say("lesson9.green_matrix.no_traceback"), str(record)) from None
        ran = WorkerReport("record", 0, 1, None, False, 0.0, "", stderr)  # its traceback read
        raise ReaderCodeError(worker_error(ran, source, READER_FILE), str(record)) from None
    finally:
        release_run_dir(folder)


def line_of(where: str | None, source: str) -> str:
    """ "your line 4: with effect:" from the explorer's "<your code>:4"."""
    number = int(where.rpartition(":")[2]) if where else 0
    lines = source.splitlines()
    if not 0 < number <= len(lines):
        return ""
    return say("lesson9.green_matrix.your_line", number=number, code=lines[number - 1].strip())


def crash_wrong(point: PointResult, source: str) -> str:
    """What went wrong at a failing crash point, and after which restart; a point that could
    not be crashed (its run did not get there again) had no recovery to name."""
    line = line_of(point.where, source)  # none for a commit of a thread not theirs (aiosqlite's)
    fields = {
        "n": point.n,
        "op": verb(point.op),
        "detail": detail_words(point),
        "where": say("lesson9.green_matrix.at_line", line=line) if line else "",
        "said": what_is_wrong(point),
    }
    if point.restart is None:
        return say("lesson9.green_matrix.not_crashed", **fields)
    when = say(f"explorer.restart.{point.restart}")
    outcome = outcome_word(point.outcome)
    return say("lesson9.green_matrix.crash_wrong", when=when, outcome=outcome, **fields)


# Read where the lab's tables hold them, (id, done) and (id, op_key, payload): a table the step
# dropped, emptied or made again with other columns holds no done=1 or PAYLOAD there.
def done_in(progress: list[list]) -> object:
    """The progress table's done, in its row 1; 0 where no such row holds one."""
    return next((row[1] for row in progress if row[:1] == [1] and len(row) > 1), 0)


def one_receipt_of_payload(receipts: list[list]) -> bool:
    """One receipt, its payload (the third column) PAYLOAD."""
    return len(receipts) == 1 and receipts[0][2:3] == [PAYLOAD]


def judge_matrix(answer: object) -> Verdict:
    """Green: one receipt of PAYLOAD and done=1 without a crash, every crash point consistent
    after recovery, and every commit seen apart."""
    source, name = source_of(answer)
    found = explored(source, name)
    receipts = found.clean.get("effect.db", {}).get("receipts", [])
    done = done_in(found.clean.get("control.db", {}).get("progress", []))
    if done != 1 or not one_receipt_of_payload(receipts):
        said = say("lesson9.green_matrix.clean_wrong", done=done, receipts=receipts)
        return Verdict("incorrect", said, found.point(None).run_dir)
    if found.unwatched:
        writes = say("explorer.report.semicolon").join(map(unwatched_words, found.unwatched))
        said = say("lesson9.green_matrix.unwatched", writes=writes)
        return Verdict("incorrect", said, found.folder)
    if found.outside:  # no crash point was explored (and the run without a crash "failed")
        files = say("explorer.report.comma").join(found.outside)
        return Verdict("incorrect", say("lesson9.green_matrix.outside", files=files), found.folder)
    for point in found.failing:
        return Verdict("incorrect", crash_wrong(point, source), point.run_dir)
    if found.stopped:  # interrupted before every crash state was explored: not green
        why = failed_words(found.stopped_by) if found.stopped_by else found.stopped
        return no_verdict(say("lesson9.green_matrix.exploration"), why, found.folder)
    said = say("lesson9.green_matrix.correct", points=found.crash_points, states=found.crash_states)
    return Verdict("correct", said, found.folder)


green_matrix = Exercise(
    "lesson9.green_matrix",
    "09_green_matrix.py",
    starter="""def report_step(control, effect, gate):
    import time

    key = f"job-17:save-report:{time.strftime('%Y-%m-%d %H')}"
    with effect:
        effect.add_receipt_once(key, PAYLOAD)
    with control:
        control.mark_done()""",
    judge=judge_matrix,
    code=True,
)
