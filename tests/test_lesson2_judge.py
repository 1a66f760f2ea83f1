"""Lesson 2's judges say exactly what their real runs showed (issue 33: the mutants mutmut left
in workshop/lesson2.py): the TTL's verdicts with their hours and folders, the evidence of each
case (before and after the retry), the answers of the tool checklist, the kill points' words.
The step judge's refusals (not_reached, not_the_same, no_commit_seen) are in test_mutants.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

from wrong_answers import RIGHT
from wrong_answers import step as a_step

from labkit.bench.gate import same_point
from labkit.bench.trace import read_trace
from labkit.language import say
from labkit.studies.commit_window.expired_key import HOUR, LONGEST_DELAY, ExpiredKeyRun
from labkit.studies.commit_window.stores import KEY
from labkit.workshop import lesson2
from labkit.workshop.checks import Measured
from labkit.workshop.lesson2 import (
    answer_step,
    point_words,
    read_checklist_answer,
    read_hours,
    shortest_ttl,
    study_000_case,
    unwatched,
)


def ttl_of(run_dir: str) -> float:
    """The TTL a run of the expired key was made with, from its own results.json."""
    return json.loads((Path(run_dir) / "results.json").read_text())["ttl_h"]


def test_the_shortest_ttl_is_correct_and_says_what_one_hour_less_left():
    verdict = shortest_ttl.check(31)
    assert (verdict.status, verdict.message) == (
        "correct",
        "31 h keeps one receipt; 30 h left 2: the shortest TTL, in whole hours, for this delay",
    )
    assert ttl_of(verdict.run_dir) == 31  # the answer's own run


def test_a_ttl_the_delay_outlives_shows_its_pruned_key_and_its_run():
    verdict = shortest_ttl.check("30 h")
    assert (verdict.status, verdict.message) == (
        "incorrect",
        "recovered 30 h after the kill, the receiver keeping keys 30 h had pruned this one:"
        " 2 receipts",
    )
    assert ttl_of(verdict.run_dir) == 30


def test_a_ttl_longer_than_needed_shows_the_shorter_run_that_kept_one():
    verdict = shortest_ttl.check(32)
    assert (verdict.status, verdict.message) == (
        "incorrect",
        "32 h keeps one receipt, but so does 31 h: a recovery 30 h later still finds the key,"
        " so 32 h is not the shortest",
    )
    assert ttl_of(verdict.run_dir) == 31  # the shorter one, which kept one receipt too


def test_the_longest_ttl_is_accepted_as_a_ttl_and_one_more_is_refused():
    most = LONGEST_DELAY // HOUR
    assert shortest_ttl.check(most).message.startswith(f"{most} h keeps one receipt, but so")
    refused = shortest_ttl.check(most + 1)
    assert (refused.status, refused.message) == (
        "incorrect",
        f"give the TTL as a whole number of hours from 1 to {most:,}, such as 12; not {most + 1}",
    )
    assert shortest_ttl.check("soon").message.endswith("such as 12; not 'soon'")


def a_ttl_run(failing_ttl: int, calls: list[int]):  # noqa: ANN201 - ttl_run's stand-in
    """ttl_run as the judge calls it, whose run with `failing_ttl` fails by itself."""

    def ran(hours: int) -> ExpiredKeyRun:
        calls.append(hours)
        failed = hours == failing_ttl
        why = "recovery worker exited 1: boom"
        outcome, failure = ("failed", why) if failed else ("consistent", None)
        return ExpiredKeyRun(
            30 * HOUR, hours * HOUR, Path(f"/runs/{hours}"), 0, 0, outcome, failure
        )

    return ran


def test_a_ttl_run_that_failed_by_itself_gives_no_verdict_naming_it(monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(lesson2, "ttl_run", a_ttl_run(31, calls))
    verdict = shortest_ttl.check(31)
    assert (verdict.status, verdict.message, verdict.run_dir) == (
        "no verdict",
        "a crash recovered against keys kept 31 h failed (recovery worker exited 1: boom), so it"
        " says nothing about your answer: check again",
        "/runs/31",
    )
    assert calls == [31]  # nothing more is run once the answer's own run failed
    calls.clear()
    monkeypatch.setattr(lesson2, "ttl_run", a_ttl_run(30, calls))
    verdict = shortest_ttl.check(31)
    assert (verdict.status, verdict.run_dir) == ("no verdict", "/runs/30")
    assert verdict.message.startswith("a crash recovered against keys kept 30 h failed (")
    assert calls == [31, 30]


def test_each_case_of_study_000_tells_what_it_left_before_and_after_the_retry():
    measured = study_000_case("effect_first/effect")
    assert measured[:2] == ("duplicate", "done/receipts 0/1 → 1/2"), measured
    assert measured.failure is None and Path(measured.run_dir).is_dir(), measured


def test_the_checklist_answers_come_from_each_steps_own_crash():
    effect_first = answer_step("effect_first")
    assert {q: m.value for q, m in effect_first.items()} == {
        "idempotent": "no",
        "key": "none",
        "on_retry": "duplicate",
    }
    assert effect_first["key"].story == "receipts 1 → 2 after the retry"
    idempotent = answer_step("idempotent")
    assert [m.value for m in idempotent.values()][0::2] == ["yes", "original"]
    assert idempotent["on_retry"].story == "receipts 1 → 1 after the retry"
    popped = answer_step("queue_pop")
    assert {q: m.value for q, m in popped.items()} == {
        "idempotent": "no",
        "key": "none",
        "on_retry": "next job",
    }
    assert popped["key"].story == (
        "the retry processed ['job-2']; job-1 was popped before the kill"
    ), popped["key"].story
    assert all(isinstance(m, Measured) and m.failure is None for m in popped.values())


def test_a_checklist_answer_is_read_in_its_natural_form():
    assert [read_checklist_answer(v) for v in ("Yes.", " NO ", "None!", "no key")] == [
        "yes",
        "no",
        "none",
        "none",
    ]
    assert [read_checklist_answer(v) for v in ("", "  ", 3)] == [None, None, None]


def test_a_kill_point_is_said_in_the_readers_words(chinese):
    assert point_words("start") == "开始"
    assert point_words("after commit 2 (control.db)") == "第 2 次提交（control.db）之后"
    assert point_words("after write 1 (sent.json)") == "第 1 次写入（sent.json）之后"
    assert point_words("effect") == "effect"  # a point the gate names in no other words


def a_run_folder(run_dir: str | None) -> bool:
    """A run's own folder: the files the step wrote are there."""
    return run_dir is not None and (Path(run_dir) / "control.db").is_file()


def test_a_steps_own_error_is_shown_at_its_line_with_its_run():
    typo = lesson2.safe_step.starter.replace("add_receipt(", "add_reciept_once(")
    verdict = lesson2.safe_step.check(typo)
    assert verdict.status == "error", str(verdict)
    assert "AttributeError" in verdict.message and "at line 3" in verdict.message, verdict.message
    assert a_run_folder(verdict.run_dir), verdict.run_dir


def test_a_clean_run_with_another_payload_is_refused_naming_its_receipts():
    other = (
        "def my_step(control, effect, gate):\n    with effect:\n"
        "        effect.add_receipt_once(KEY, 'another payload')\n"
        "    with control:\n        control.mark_done()\n"
    )
    verdict = lesson2.safe_step.check(other)
    assert verdict.status == "incorrect", str(verdict)
    assert verdict.message.endswith(
        f", receipts [[1, '{KEY}', 'another payload']]: it must save one receipt of PAYLOAD"
        " and done=1"
    ), verdict.message
    assert a_run_folder(verdict.run_dir), verdict.run_dir


def test_a_commit_it_never_saw_is_refused_with_the_run_that_shows_it():
    unseen = (
        "def my_step(control, effect, gate):\n    import os\n    with effect:\n"
        "        effect.add_receipt_once(KEY, PAYLOAD)\n"
        '    control.db.cursor().execute("UPDATE progress SET done=1 WHERE id=1")\n'
        "    os._exit(0)\n"
    )
    verdict = lesson2.safe_step.check(unseen)
    assert verdict.message.startswith("the check could not kill your step"), verdict.message
    assert a_run_folder(verdict.run_dir), verdict.run_dir


def test_a_step_that_writes_outside_its_run_folder_is_refused_naming_the_file(tmp_path):
    """A kill there cannot be judged: every run would find what the runs before it left (a
    note that it sent, made by the run without a crash, would skip every later run's send)."""
    note = tmp_path / "sent"
    noted = lesson2.safe_step.starter.replace(
        "    with effect:\n", f"    open({str(note)!r}, 'w').write(KEY)\n    with effect:\n"
    )
    verdict = lesson2.safe_step.check(noted)
    assert (verdict.status, verdict.message) == (
        "incorrect",
        f"your step wrote outside its run folder ({note}): the lab cannot judge a kill there,"
        " since every run would find what the runs before it left. Keep what your step"
        " remembers in control.db or effect.db, or beside them in its run folder",
    )
    assert a_run_folder(verdict.run_dir), verdict.run_dir


def test_a_write_is_the_same_point_whatever_its_file_is_called():
    """A temporary file has a new name in every run: its write is known by its number."""
    assert same_point("after write 2 (tmpk3j_2x)", "after write 2 (tmp9q_a0c)")
    assert not same_point("after write 2 (tmpk3j_2x)", "after write 3 (tmpk3j_2x)")
    assert not same_point("after commit 1 (a.db)", "after commit 1 (b.db)")
    assert same_point("start", "start") and not same_point("start", None)


def test_a_file_written_aside_is_killed_after_each_write_under_its_name_of_the_moment():
    """The key written to a temporary file of a new name in every run (NamedTemporaryFile
    opens the folder with an opener that makes the file), then renamed over key.txt: each
    point is the temporary file's own, and each is killed in a run of its own (it was judged
    "not the same": the run to be killed after it never wrote a file of that name)."""
    aside = "a uuid4 made once, written aside and renamed into place"
    verdict = lesson2.bug_hunt.check(RIGHT["lesson2.bug_hunt"][aside])
    assert verdict.status == "correct", str(verdict)
    assert re.fullmatch(
        r"done=1 and one receipt after a kill at every one of the 6 points your step passed:"
        r" start, after write 1 \((tmp\w+)\), after write 2 \(\1\), after write 3 \(key.txt\),"
        r" after commit 1 \(effect.db\), after commit 2 \(control.db\)",
        verdict.message,
    ), verdict.message


def test_a_marker_made_or_removed_without_a_byte_written_is_a_kill_point():
    """A file of the run folder made empty (`Path.touch`), or removed, changes what a retry
    finds as a write does: the step is killed right after each. This step sends without the
    receiver's key unless its marker says a send was under way, and removes the marker before
    done=1: killed after that removal, the retry sends again (the receiver refuses it)."""
    marked = a_step(
        "from pathlib import Path\nmarker = Path('sending')\nif marker.exists():\n"
        "    effect.add_receipt_once(KEY, PAYLOAD)\nelse:\n    marker.touch()\n"
        "    effect.add_receipt(KEY, PAYLOAD)\nmarker.unlink()\ncontrol.mark_done()"
    )
    verdict = lesson2.safe_step.check(marked)
    assert verdict.status == "incorrect", str(verdict)
    assert verdict.message.startswith(
        "killed at `after write 2 (sending)`, when the files held done=0 and 1 receipt"
        " (unfinished), the recovery failed: your code raised sqlite3.IntegrityError"
    ), verdict.message
    assert [e["point"] for e in read_trace(verdict.run_dir) if e["event"] == "point"][:5] == [
        "start",
        "after write 1 (sending)",
        "after commit 1 (effect.db)",
        "after write 2 (sending)",
        "start",  # the recovery's: killed at the write before it, at the removal
    ]


def test_a_step_that_writes_in_shared_memory_is_refused_as_outside_its_run_folder(tmp_path):
    """/dev/shm is no device whose writes vanish: its files outlive a killed process. A note
    that it sent kept there, one for each run folder, hid the window between the note and the
    receipt (it was not noted, and judged correct)."""
    shared = Path("/dev/shm")
    prefix = f"labkit-test-{tmp_path.name}-"
    noted = a_step(
        f"import os\nnote = {str(shared / prefix)!r} + os.path.basename(os.getcwd())\n"
        "if not os.path.exists(note):\n    open(note, 'w').write(KEY)\n"
        "    effect.add_receipt(KEY, PAYLOAD)\ncontrol.mark_done()"
    )
    try:
        verdict = lesson2.safe_step.check(noted)
    finally:
        for note in shared.glob(f"{prefix}*"):
            note.unlink()
    assert verdict.status == "incorrect", str(verdict)
    written = shared / f"{prefix}{Path(verdict.run_dir).name}"
    assert verdict.message.startswith(f"your step wrote outside its run folder ({written})")


def counted_step(runs: Path, raise_at: int) -> str:
    """A safe step that counts its runs in `runs` and raises in run number `raise_at` (from
    0), before its first commit (line 7). The count is kept outside the run folder through
    posix's own calls, below the names the lab watches: a test's device that the judge does
    not see (a step that writes outside its folder through `open` or `os` is refused)."""
    return (
        "def my_step(control, effect, gate):\n    import posix\n"
        f"    runs = posix.open({str(runs)!r}, posix.O_RDWR | posix.O_CREAT | posix.O_APPEND)\n"
        "    count = len(posix.read(runs, 64))\n    posix.write(runs, b'x')\n"
        f"    if count == {raise_at}:\n        raise ValueError('run again')\n"
        "    with effect:\n        effect.add_receipt_once(KEY, PAYLOAD)\n"
        "    with control:\n        control.mark_done()\n"
    )


def test_a_step_that_raises_when_run_again_is_not_the_same_and_says_its_error(tmp_path):
    """Its third run (the run without a crash, the recovery of `start`, then the run to be
    killed after commit 1) raises before that commit: not killed there, it failed."""
    again = counted_step(tmp_path / "runs", raise_at=2)
    verdict = lesson2.safe_step.check(again)
    assert verdict.status == "incorrect", str(verdict)
    assert verdict.message.startswith("killed at `after commit 1 (effect.db)`"), verdict.message
    assert verdict.message.endswith(
        ": your code raised ValueError: run again, at line 7: raise ValueError('run again');"
        " a step must commit the same way every run"
    ), verdict.message


def test_a_recovery_that_raises_is_refused_with_its_run(tmp_path):
    """Its second run is the recovery of the kill at `start`: it raises there."""
    runs = tmp_path / "runs"
    verdict = lesson2.safe_step.check(counted_step(runs, raise_at=1))
    assert verdict.message == (
        "killed at `start`, when the files held done=0 and 0 receipts (unfinished), the"
        " recovery failed: your code raised ValueError: run again, at line 7: raise"
        " ValueError('run again'). A retry must get the receipt back, not an error"
    ), verdict.message
    assert a_run_folder(verdict.run_dir), verdict.run_dir


def test_an_unsafe_step_is_refused_with_the_run_that_lost_or_doubled(tmp_path):
    unsafe = lesson2.bug_hunt.starter.replace("job-17:save-report:", "job-17:report:")
    verdict = lesson2.bug_hunt.check(unsafe)  # every retry's key is new: a second receipt
    assert verdict.message.startswith("killed at `after commit 1 (effect.db)`"), verdict.message
    assert verdict.message.endswith("your step is not safe to replay"), verdict.message
    assert a_run_folder(verdict.run_dir), verdict.run_dir


def test_a_safe_step_is_correct_naming_every_point_it_was_killed_at():
    safe = lesson2.safe_step.starter.replace("add_receipt(", "add_receipt_once(")
    verdict = lesson2.safe_step.check(safe)
    assert (verdict.status, verdict.message) == (
        "correct",
        "done=1 and one receipt after a kill at every one of the 3 points your step passed:"
        " start, after commit 1 (effect.db), after commit 2 (control.db)",
    )
    assert a_run_folder(verdict.run_dir), verdict.run_dir


def killing_step(runs: Path, kill_at: int) -> str:
    """A safe step that counts its runs in `runs` and SIGKILLs itself in run number `kill_at`
    (from 0), before its first commit: it dies, but not at the point it was to be killed."""
    return (
        counted_step(runs, kill_at)
        .replace("raise ValueError('run again')", "os.kill(os.getpid(), signal.SIGKILL)")
        .replace(
            "def my_step(control, effect, gate):\n",
            "def my_step(control, effect, gate):\n    import os, signal\n",
        )
    )


def test_a_step_that_kills_itself_when_run_again_did_not_reach_its_point(tmp_path):
    """Its third run, to be killed after commit 1, dies of its own SIGKILL before it: a first
    worker that ends by SIGKILL is one the lab may have killed (KILLED), so no error of the
    reader's is shown; it did not reach the point (killed_at is not that point)."""
    verdict = lesson2.safe_step.check(killing_step(tmp_path / "runs", kill_at=2))
    assert verdict.status == "incorrect", str(verdict)
    assert verdict.message.startswith("killed at `after commit 1 (effect.db)`"), verdict.message
    assert "did not reach that point" in verdict.message, verdict.message
    assert "-9" not in verdict.message and "signal" not in verdict.message, verdict.message


TIMED_OUT = {"code": "timed_out", "role": "recovery", "seconds": 60.0}


def failed_run(run_dir: Path, **parts: object) -> SimpleNamespace:
    """A commit-window run that failed by itself (its recovery timed out), shaped as a
    RunResult where the judges read it."""
    state = SimpleNamespace(done=0, receipts=1, table=lambda name: SimpleNamespace(rows=[]))
    order = SimpleNamespace(files=["control.db", "effect.db"])
    shape = {"run_dir": run_dir, "failure": TIMED_OUT, "outcome": "failed", "before": state}
    return SimpleNamespace(
        **{"after": state, "spec": SimpleNamespace(write_order=order), **shape, **parts}
    )


def test_a_case_whose_run_failed_by_itself_carries_its_failure(tmp_path, monkeypatch):
    """study_000_case and each of answer_step's answers keep the run's failure, which
    judge_predictions turns into "no verdict" (a timeout is not the reader's answer)."""
    monkeypatch.setattr(lesson2, "run", lambda *args: failed_run(tmp_path))
    monkeypatch.setattr(lesson2, "run_tool_step", lambda *args: failed_run(tmp_path))
    monkeypatch.setattr(lesson2, "receiver_key", lambda run_dir, file: "none")
    assert study_000_case("effect_first/effect").failure == TIMED_OUT
    for step in ("effect_first", "queue_pop"):
        answers = answer_step(step)
        assert [m.failure for m in answers.values()] == [TIMED_OUT] * 3, (step, answers)


def test_a_ttl_is_read_in_hours_with_its_unit_or_without_one():
    assert [read_hours(v) for v in (31, "31", "31.0", "31 h", "31 hours", 31.0)] == [31] * 6
    assert [read_hours(v) for v in ("31 小时", "31小时", "31 个小时", "31 钟头")] == [31] * 4
    assert [read_hours(v) for v in ("31 minutes", "31 s", "2 days")] == [None] * 3
    assert [read_hours(v) for v in ("31 分钟", "2 天", "31 秒")] == [None] * 3


def test_a_wal_file_the_check_could_not_read_is_said_with_its_file(tmp_path):
    """The commit watch's unwatched event with reason "wal" becomes lesson 2's own words."""
    event = {"event": "unwatched", "role": "first", "files": ["effect.db"], "reason": "wal"}
    (tmp_path / "trace.jsonl").write_text(json.dumps(event) + "\n")
    said = unwatched(SimpleNamespace(run_dir=str(tmp_path)))
    assert said == say("lesson2.step.wal", files="effect.db")
    assert said.startswith("effect.db is in WAL mode")
