"""Every exercise: its loaded solution checks itself and passes, its starter is "not attempted",
every answer of the wrong-answer catalogue (tests/wrong_answers.py) is judged incorrect with a
message in the lesson's terms, every right variant correct. The checks run real crashes."""

from __future__ import annotations

import ast
import itertools
import json
import linecache
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from wrong_answers import ERRORS, RIGHT, WRONG, key

from labkit.bench.errors import LabError
from labkit.language import say
from labkit.studies.commit_window.stores import KEY, PAYLOAD
from labkit.studies.durability.experiment import DURABILITY_MODES, DurabilitySpec, Trial
from labkit.workshop import (
    lesson1,
    lesson2,
    lesson3,
    lesson4,
    lesson5,
    lesson6,
    lesson7,
    lesson8,
    lesson9,
)
from labkit.workshop.checks import Measured, Verdict

ROOT = Path(__file__).resolve().parent.parent
LESSONS = {
    "lesson1": lesson1,
    "lesson2": lesson2,
    "lesson3": lesson3,
    "lesson4": lesson4,
    "lesson5": lesson5,
    "lesson6": lesson6,
    "lesson7": lesson7,
    "lesson8": lesson8,
    "lesson9": lesson9,
}
EXERCISES = {
    ex.name: ex for lesson in LESSONS.values() for ex in map(lesson.__dict__.get, lesson.__all__)
}


CELLS = itertools.count(1)


def run_cell(text: str, filename: str | None = None) -> object:
    """Run a cell's code as a notebook would, with the lesson's imports: the last
    expression's value (a loaded solution ends with its own check). Like IPython, it keeps
    the cell's text where `inspect.getsource` finds it."""
    filename = filename or f"<cell {next(CELLS)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace: dict = {**LESSONS, "KEY": KEY, "PAYLOAD": PAYLOAD}
    tree = ast.parse(text)
    last = tree.body.pop() if isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, filename, "exec"), namespace)
    return eval(compile(ast.Expression(last.value), filename, "eval"), namespace) if last else None


def answer_from(text: str, code: bool) -> object:
    """A function's source as it is; a value: the first assignment's value."""
    if code:
        return text
    namespace: dict = {}
    exec(text, namespace)
    target = next(n for n in ast.parse(text).body if isinstance(n, ast.Assign)).targets[0].id
    return namespace[target]


def lesson_sources(exercise_name: str) -> list[str]:
    [notebook] = (ROOT / "notebooks").glob(f"0{exercise_name[6]}_*.ipynb")
    return ["".join(c["source"]) for c in json.loads(notebook.read_text())["cells"]]


def test_the_catalogue_holds_five_wrong_answers_for_every_exercise():
    assert set(WRONG) == set(EXERCISES) and set(RIGHT) == set(EXERCISES)
    assert all(len(WRONG[name]) >= 5 for name in EXERCISES), {n: len(w) for n, w in WRONG.items()}
    assert len(EXERCISES) == 21


def test_lessons_5_to_8_hold_three_right_variants_and_a_typo_for_every_exercise():
    names = [
        n for n in EXERCISES if n.split(".")[0] in ("lesson5", "lesson6", "lesson7", "lesson8")
    ]
    assert all(len(RIGHT[name]) >= 3 for name in names), {n: len(RIGHT[n]) for n in names}
    typos = {
        n: [label for label in {**WRONG[n], **ERRORS.get(n, {})} if "typo" in label] for n in names
    }
    assert all(typos.values()), typos


@pytest.mark.parametrize("name", list(EXERCISES))
def test_a_loaded_solution_checks_itself_and_passes(name):
    path = ROOT / "notebooks" / "solutions" / EXERCISES[name].solution_file
    verdict = run_cell(path.read_text(), str(path))
    assert isinstance(verdict, Verdict) and verdict.status == "correct", str(verdict)
    assert verdict.run_dir and Path(verdict.run_dir).is_dir()


@pytest.mark.parametrize("name", list(EXERCISES))
def test_the_starter_runs_as_not_attempted_and_appears_in_its_lesson(name):
    exercise = EXERCISES[name]
    sources = lesson_sources(name)
    [cell] = [s for s in sources if exercise.starter in s]
    assert run_cell(cell).status == "not attempted"  # the lesson's cell, as CI runs it
    assert any(f"# %load solutions/{exercise.solution_file}" in s for s in sources)
    assert exercise.solution().startswith(f"# %load solutions/{exercise.solution_file}")


@pytest.mark.parametrize(
    ("name", "label"), [(name, label) for name, answers in WRONG.items() for label in answers]
)
def test_a_wrong_answer_is_judged_incorrect_and_says_why(name, label):
    exercise = EXERCISES[name]
    answer, why = WRONG[name][label]
    verdict = exercise.check(answer)
    assert verdict.status == "incorrect" and why in verdict.message, str(verdict)


@pytest.mark.parametrize(
    ("name", "label"), [(name, label) for name, answers in ERRORS.items() for label in answers]
)
def test_code_that_cannot_do_its_job_is_an_error_that_says_what_to_mend(name, label):
    answer, why = ERRORS[name][label]
    verdict = EXERCISES[name].check(answer)
    assert verdict.status == "error" and why in verdict.message, str(verdict)


@pytest.mark.parametrize(
    ("name", "label"), [(name, label) for name, answers in RIGHT.items() for label in answers]
)
def test_a_right_variant_is_judged_correct(name, label):
    verdict = EXERCISES[name].check(RIGHT[name][label])
    assert verdict.status == "correct", str(verdict)


def test_a_crash_verdict_names_the_failing_run_and_what_the_files_held():
    unsafe = lesson2.safe_step.starter.replace("my_step", "effect_first_step")
    verdict = lesson2.safe_step.check(unsafe)
    assert verdict.status == "incorrect", str(verdict)
    held = "killed at `after commit 1 (effect.db)`, when the files held done=0 and 1 receipt"
    assert held in verdict.message
    results = json.loads((Path(verdict.run_dir) / "results.json").read_text())
    assert results["kill_at"] == "after commit 1 (effect.db)"  # the failing run, not the first


def test_an_error_in_the_readers_code_is_shown_with_their_line():
    typo = lesson2.safe_step.starter.replace("add_receipt(", "add_reciept_once(")
    verdict = lesson2.safe_step.check(typo)
    assert verdict.status == "error", str(verdict)
    assert "AttributeError" in verdict.message and "add_reciept_once" in verdict.message
    assert "at line 3: effect.add_reciept_once(KEY, PAYLOAD)" in verdict.message
    assert verdict.run_dir and (Path(verdict.run_dir) / "first.stderr").read_text()
    key_typo = lesson3.operation_key.check(
        'def operation_key(state):\n    return state["operation_id"].uper()\n'
    )
    assert key_typo.status == "error" and "at line 2: return" in key_typo.message, str(key_typo)
    broken = lesson2.bug_hunt.check("def buggy_step(control, effect, gate)\n    pass\n")
    assert broken.status == "error" and "SyntaxError" in broken.message and "line 1" in str(broken)


def test_a_partly_filled_prediction_names_the_open_parts_and_hides_their_answers():
    partly = {"before_create": 2, "after_create": None, "paused": "???"}
    verdict = lesson3.predict_kills.check(partly)
    assert verdict.status == "incomplete", str(verdict)
    assert "Still open: after_create, paused." in verdict.message
    wrong = lesson3.predict_kills.check({**partly, "before_create": 1})
    assert wrong.status == "incorrect" and "Still open: after_create, paused." in wrong.message
    assert "after_create:" not in wrong.message and "paused:" not in wrong.message
    assert "gave 3" not in wrong.message
    assert str(wrong).count(wrong.run_dir) == 1  # the failing run's folder, named once


def test_hints_say_something_new_each_time_and_which_is_the_last():
    for exercise in EXERCISES.values():
        exercise.hints_shown = 0
        shown = [exercise.hint() for _ in exercise.hints]
        assert len(set(exercise.hints)) == len(exercise.hints) >= 2
        assert all(h.startswith(f"Hint {i} of {len(shown)}") for i, h in enumerate(shown, 1))
        assert "last hint" in shown[-1] and not any("last hint" in h for h in shown[:-1])
        assert exercise.hint() == shown[-1]  # asking again repeats the last one


@pytest.fixture
def no_runs(monkeypatch):
    """Every way a check starts a real run fails the test: a form error must return first."""

    def started(*args, **kwargs):
        raise AssertionError(f"a run started for {args or kwargs}")

    for lesson, name in [
        (lesson1, "run"),
        (lesson2, "study_000_case"),
        (lesson3, "interrupt_case"),
        (lesson4, "sync_trial"),
        (lesson4, "run_trials"),
        (lesson5, "measure_tickets"),
        (lesson5, "run_recovery"),
    ]:
        monkeypatch.setattr(lesson, name, started)


GARBAGE = ["x", ["consistent", "lost"], "two", 2.5, True, "", {"a": 1}, -1]


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("lesson2.predict_five_cases", "one of: consistent, duplicate, lost"),
        ("lesson3.predict_kills", "a whole number"),
        ("lesson4.predict_sync_trial", "a whole number"),
        ("lesson5.predict_tickets", "a whole number"),
    ],
)
def test_a_garbage_prediction_gets_a_form_message_that_runs_and_reveals_nothing(
    name, says, no_runs
):
    exercise = EXERCISES[name]
    cases = list(answer_from(exercise.starter, code=False))
    for start in range(0, len(GARBAGE), len(cases)):  # no run starts (no_runs): none can show
        garbage = dict(zip(cases, (GARBAGE * 2)[start:], strict=False))
        verdict = exercise.check(garbage)
        assert verdict.status == "incorrect" and says in verdict.message, str(verdict)
        assert all(case in verdict.message for case in cases), str(verdict)
        assert "real run" not in verdict.message and verdict.run_dir is None


def test_lesson_1_takes_any_set_and_gives_a_form_message_for_what_is_not_a_kill_point(no_runs):
    nested = lesson1.find_the_window.check([["checkpoint"]])
    assert nested.status == "incorrect" and "each kill point is a word" in nested.message
    assert lesson1.find_the_window.check(frozenset({"???"})).status == "not attempted"
    for answer in ({"commit"}, frozenset({"Checkpoint", "later"}), 7):
        assert lesson1.find_the_window.check(answer).status == "incorrect"


def test_a_wrong_window_does_not_count_the_points_it_left_out():
    verdict = lesson1.find_the_window.check({"start"})
    assert verdict.status == "incorrect", str(verdict)
    assert "leaves out one or more points where a kill loses the receipt" in verdict.message
    assert not re.search(r"\d kill point", verdict.message)
    assert str(verdict).count(verdict.run_dir) == 1  # the folder is named once


def test_a_failed_run_judges_no_answer_and_reveals_nothing(monkeypatch, tmp_path):
    why = "first worker timed out after 10 s"
    measured = Measured(3, "receipts []", str(tmp_path), why)
    monkeypatch.setattr(lesson3, "interrupt_case", lambda point: measured)
    verdict = lesson3.predict_kills.check({"before_create": 1, "after_create": 2, "paused": 2})
    assert verdict.status == "no verdict" and why in verdict.message, str(verdict)
    assert "3" not in verdict.message and verdict.run_dir == str(tmp_path)

    def broken(order: str, point: str) -> SimpleNamespace:  # a RunResult whose worker failed
        spec = SimpleNamespace(kill_at=point)
        return SimpleNamespace(spec=spec, failure=why, run_dir=tmp_path, outcome="failed")

    monkeypatch.setattr(lesson1, "run", broken)
    verdict = lesson1.find_the_window.check({"effect"})
    assert verdict.status == "no verdict" and "killed at start" in verdict.message, str(verdict)


def trial(mode: str, run_dir: Path, failure: str | None = None) -> Trial:
    """A trial as run_trials returns it: resumed, c run again; or failed, with no outcome."""
    return Trial(
        spec=DurabilitySpec("linear", mode, lesson4.SLOW_MS),
        run_dir=str(run_dir),
        first_exit=-9,
        killed_inside=True,
        checkpoints=4,
        writes=4,
        orphan_writes=0,
        resumed=failure is None,
        recovery_error=None,
        ledger_lines=9,
        baseline_lines=8,
        rerun_nodes=["c"],
        pids=[1, 2],
        failure=failure,
    )


def test_a_failed_trial_is_never_scored_as_a_lost_run(monkeypatch, tmp_path):
    """A worker that died of its own error left no checkpoint to resume: it is no outcome."""
    why = "recovery worker exited 1: RuntimeError: boom"
    trials = [trial(m, tmp_path / m) for m in DURABILITY_MODES for _ in range(lesson4.TRIALS)]
    trials[0] = trial("sync", tmp_path / "broken", why)
    monkeypatch.setattr(lesson4, "run_trials", lambda specs, n: trials)
    verdict = lesson4.choose_durability.check("sync")
    assert verdict.status == "no verdict", str(verdict)
    assert why in verdict.message and verdict.run_dir == str(tmp_path / "broken")
    assert "lost" not in verdict.message and "cost" not in verdict.message


def test_a_hint_number_outside_the_hints_is_refused_in_one_line():
    exercise = lesson2.safe_step
    exercise.hints_shown = 0
    for number in (-1, 0, 4, "2", True, 2.0):
        with pytest.raises(LabError, match="hint number must be a whole number from 1 to 3"):
            exercise.hint(number)
    assert exercise.hints_shown == 0  # a refused number moves nothing
    assert exercise.hint(2).startswith("Hint 2 of 3") and "last hint" not in exercise.hint(2)
    last = exercise.hint()
    assert last.startswith("Hint 3 of 3") and "That was the last hint" in last
    assert exercise.hint(3) == last


def test_the_safe_step_hints_say_what_is_true_of_two_files():
    hints = " ".join(map(say, lesson2.safe_step.hints))
    assert "The two files cannot share a transaction" not in hints  # ATTACH lets them
    assert "Each Store commits its own file" in hints


def test_a_readers_clean_run_passes_one_kill_point_per_commit_whatever_wrote_it(tmp_path):
    """Stores, a connection of the reader's own in another thread, a trace callback of theirs:
    one point after each commit, named by the file the commit changed, nothing unwatched."""
    import labkit as lk
    from labkit.bench.trace import read_trace

    source = (
        "def my_step(control, effect, gate):\n"
        "    import sqlite3, threading\n"
        "    effect.db.set_trace_callback(print)\n"
        "    effect.add_receipt_once(KEY, PAYLOAD)\n"
        "    def note():\n"
        '        sqlite3.connect("effect.db", isolation_level=None).execute("CREATE TABLE n(x)")\n'
        "    thread = threading.Thread(target=note)\n"
        "    thread.start()\n"
        "    thread.join()\n"
        "    with control:\n"
        "        control.mark_done()\n"
    )
    spec = lk.RunSpec("idempotent", step_source=source, step_name="my_step", out=tmp_path / "r")
    trace = read_trace(lk.execute(spec).run_dir)
    first = [e for e in trace if e["role"] == "first"]
    assert [e["point"] for e in first if e["event"] == "point"] == [
        "start",
        "after commit 1 (effect.db)",
        "after commit 2 (effect.db)",
        "after commit 3 (control.db)",
    ]
    assert not [e for e in first if e["event"] == "unwatched"]


def test_the_key_probe_runs_in_its_run_folder():
    package = Path(lesson3.__file__).parent
    files_before = sorted(package.iterdir())
    counter = key(
        "import os\n"
        'with open("calls", "a") as calls:\n'
        '    calls.write("x")\n'
        "return state['operation_id'] + ':' + str(os.path.getsize('calls'))"
    )
    verdict = lesson3.operation_key.check(counter)
    assert verdict.status == "incorrect" and "in one process" in verdict.message, str(verdict)
    assert sorted(package.iterdir()) == files_before
    # the first worker's 4 calls in the run folder, the restarted one's 3 in its own inside it
    assert (Path(verdict.run_dir) / "calls").read_text() == "x" * 4
    assert (Path(verdict.run_dir) / "after-elsewhere" / "calls").read_text() == "x" * 3
