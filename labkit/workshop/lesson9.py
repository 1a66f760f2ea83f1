"""Lesson 9 · The crash explorer (notebooks/09_the_crash_explorer.ipynb): its checked exercise.

The judge is the explorer itself: it runs the reader's step once without a crash, crashes it
after every commit it made, recovers each crash state in a fresh process a day later (a key of
the clock or the pid changes there, as after a real restart) and checks every effect exactly
once. The matrix must be green.

    lesson9.green_matrix.check(report_step)   # .hint(), .solution()
"""

from __future__ import annotations

from labkit.bench.errors import RunFailed
from labkit.bench.folders import new_run_dir, release_run_dir
from labkit.bench.launcher import WorkerReport
from labkit.studies.commit_window.stores import PAYLOAD
from labkit.studies.explorer.replay import ExploreSpec, explore_spec
from labkit.studies.explorer.report import Exploration
from labkit.studies.explorer.target import READER_FILE, source_target
from labkit.workshop.checks import Exercise, ReaderCodeError, Verdict, source_of, worker_error

__all__ = ["green_matrix"]


def explored(source: str, name: str) -> Exploration:
    """The explorer on the reader's step; their own error in the run without a crash is theirs."""
    folder = new_run_dir(None, "lesson9-")
    try:
        return explore_spec(ExploreSpec(source_target(source, name)), folder)
    except RunFailed:
        record = folder / "record"
        stderr = (record / "record.stderr").read_text() if record.exists() else ""
        ran = WorkerReport("record", 0, 1, None, False, 0.0, "", stderr)
        raise ReaderCodeError(worker_error(ran, source, READER_FILE), str(record)) from None
    finally:
        release_run_dir(folder)


def line_of(where: str | None, source: str) -> str:
    """ "your line 4: with effect:" from the explorer's "<your code>:4"."""
    number = int(where.rpartition(":")[2]) if where else 0
    lines = source.splitlines()
    return f"your line {number}: {lines[number - 1].strip()}" if 0 < number <= len(lines) else ""


def judge_matrix(answer: object) -> Verdict:
    """Green: one receipt of PAYLOAD and done=1 without a crash, every crash point consistent
    after recovery, and every commit seen apart."""
    source, name = source_of(answer)
    found = explored(source, name)
    receipts = found.clean.get("effect.db", {}).get("receipts", [])
    done = found.clean.get("control.db", {}).get("progress", [[1, 0]])[0][1]
    if (len(receipts), done) != (1, 1) or receipts[0][2] != PAYLOAD:
        return Verdict(
            "incorrect",
            f"run once without a crash, your step left done={done} and receipts {receipts}: "
            "it must save one receipt of PAYLOAD and done=1",
            found.point(None).run_dir,
        )
    if found.unwatched:
        return Verdict(
            "incorrect",
            f"the explorer could not crash your commits apart: {'; '.join(found.unwatched)}. "
            "Keep SQLite's own journal and commit one transaction after another",
            found.folder,
        )
    for point in found.failing:
        said = point.failure or point.complaint.removeprefix(f"{point.outcome}: ")
        where = line_of(point.where, source)
        return Verdict(
            "incorrect",
            f"a crash at crash point {point.n} (after the {point.op} of {point.detail}; {where}) "
            f"and a recovery a day later end {point.outcome}: {said}",
            point.run_dir,
        )
    return Verdict(
        "correct",
        f"green: consistent after a crash at every one of the {found.crash_points} crash points "
        f"({found.crash_states} crash states) and a recovery a day later",
        found.folder,
    )


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
    hints=[
        "Explore it first: lk.explore(...) on your step shows which crash point fails and what "
        "the files held after recovery. Which line made the commit before that point?",
        "The recovery runs as after a real restart: a day and an hour later, in a new process. "
        "Anything the key is made of must be the same then: is the hour?",
        "Use the operation's own key, fixed before the first attempt: KEY. add_receipt_once "
        "then gives a retry the original receipt, and done=1 comes after it.",
    ],
)
