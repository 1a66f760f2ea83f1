"""The checked exercises' shared machinery, on answers and runs written out by hand (issue 33:
the mutants mutmut left in workshop/checks.py). The lessons' judges all end here: what counts
as a starter, how a prediction is read, which verdict a set of real runs gives and what it
says. A fake `measure` stands for the real runs, so each test asserts the exact verdict.
"""

from __future__ import annotations

import pytest

from labkit.bench.errors import LabError
from labkit.bench.launcher import WorkerReport
from labkit.language import say
from labkit.workshop.checks import (
    WHOLE_NUMBER,
    Exercise,
    Measured,
    ReaderCodeError,
    Text,
    UnmetExpectation,
    Verdict,
    also_in,
    case_name,
    check_worker,
    code_error,
    each,
    is_open,
    judge_predictions,
    lone,
    no_verdict,
    normalized,
    one_of,
    source_of,
    word,
    worker_error,
)

CASES = ["effect_first", "atomic", "idempotent"]
OUTCOMES = one_of("duplicate", "lost", "consistent")
REAL = {"effect_first": "duplicate", "atomic": "consistent", "idempotent": "consistent"}


def measured(asked: list):
    """A measure that records which cases it was asked for, and gives REAL for them."""

    def measure(cases: list[str]) -> dict[str, Measured]:
        asked.append(list(cases))
        return {c: Measured(REAL[c], f"story of {c}", f"/runs/{c}") for c in cases}

    return measure


def test_a_verdict_says_its_word_its_message_and_where_to_look():
    v = Verdict("incorrect", "two receipts", "/runs/a")
    assert not v and Verdict("correct", "").__bool__() is True
    assert v.word() == "INCORRECT" and Verdict("not attempted", "").word() == "NOT ATTEMPTED"
    assert str(v) == "INCORRECT: two receipts\n(look in /runs/a)"
    assert str(Verdict("correct", "ok")) == "CORRECT: ok"
    assert v._repr_html_() == (
        '<div style="border-left:6px solid #D55E00;padding:4px 10px">'
        "<b>INCORRECT</b>: two receipts<br><small>look in <code>/runs/a</code></small></div>"
    )
    html = Verdict("no verdict", "a <b>\nline")._repr_html_()
    assert html == (
        '<div style="border-left:6px solid #56B4E9;padding:4px 10px">'
        "<b>NO VERDICT</b>: a &lt;b&gt;<br>line</div>"
    )
    assert repr(Text("a hint")) == "a hint"


def test_errors_keep_their_run_folder():
    assert ReaderCodeError("x", "/r").run_dir == "/r" and ReaderCodeError("x").run_dir is None
    assert UnmetExpectation("y", "/u").run_dir == "/u" and UnmetExpectation("y").run_dir is None
    assert str(UnmetExpectation("y")) == "y"


@pytest.mark.parametrize(("value", "open_"), [("???", True), (" ??? ", True), (None, True)])
def test_a_placeholder_is_open(value, open_):
    assert is_open(value) is open_
    assert is_open(...) and not is_open("") and not is_open("x") and not is_open(0)
    assert not is_open(False) and not is_open([])


def test_a_word_is_read_in_its_natural_form():
    assert word(" Lost.") == "lost" and word("Duplicate!!") == "duplicate"
    assert word("  Two   Words ") == "two words" and word(3) is None and word(None) is None
    assert lone(["x"]) == "x" and lone(("x",)) == "x" and lone({"x"}) == "x"
    assert lone(frozenset({"x"})) == "x" and lone(["a", "b"]) == ["a", "b"] and lone("ab") == "ab"
    assert lone([]) == []


def test_one_of_reads_a_word_with_its_endings():
    read = OUTCOMES.read
    assert [read(v) for v in ("Duplicated", "duplicates", "LOST.", ["consistent"])] == [
        "duplicate",
        "duplicate",
        "lost",
        "consistent",
    ]
    assert read("duplicat") is None and read("lostx") is None and read(2) is None
    assert OUTCOMES.says == "one of: duplicate, lost, consistent"


@pytest.mark.parametrize(
    ("value", "count"),
    [
        (2, 2),
        (0, 0),
        (2.0, 2),
        ("2", 2),
        ("2.0", 2),
        ("2.", 2),
        ("12 tickets", 12),
        ("2tickets", 2),
        ("2 张", 2),  # the unit in the reader's language: a Chinese reader writes it so
        ("2张工单", 2),
        ("2 张 工单", None),
        (["3"], 3),
        ("two", None),
        (2.5, None),
        ("2.5", None),
        (True, None),
        (False, None),
        (-1, None),
        ("-1", None),
        ("2 3", None),
        (None, None),
    ],
)
def test_a_whole_number_is_read_from_digits_only(value, count):
    read = WHOLE_NUMBER.read(value)
    assert read == count and type(read) is type(count)
    assert WHOLE_NUMBER.says == "a whole number, written in digits"


def test_the_readers_error_names_their_line_when_there_is_one():
    source = "def f():\n    x = 1\n    return y\n"
    assert code_error("E: e", 3, source) == "your code raised E: e, at line 3: return y"
    assert code_error("E: e", 1, source) == "your code raised E: e, at line 1: def f():"
    for line in (None, 0, 4, -1):
        assert code_error("E: e", line, source) == "your code raised E: e"


def worker(code, stderr="", timed_out=False, role="first") -> WorkerReport:
    return WorkerReport(role, 1, code, None, timed_out, 0.0, "", stderr)


TRACEBACK = """Traceback (most recent call last):
  File "/lab/run.py", line 9, in main
  File "<your code>", line 1, in <module>
  File "<your code>", line 2, in f
  File "<your code>", line 3, in g
NameError: name 'y' is not defined
"""


def test_a_worker_that_ended_as_planned_has_no_error_and_one_that_did_not_says_why():
    source = "def f():\n    g()\n    return y\n"
    assert worker_error(worker(0), source, "<your code>") is None
    assert worker_error(worker(91), source, "<your code>", (0, 91)) is None
    assert worker_error(worker(91), source, "<your code>") == "your code raised exit status 91"
    assert worker_error(worker(0, timed_out=True), source, "<your code>") == (
        "the first worker did not finish in time (an endless loop?)"
    )
    said = worker_error(worker(1, TRACEBACK), source, "<your code>")
    assert said == (
        "your code raised NameError: name 'y' is not defined, at line 3: return y (a name"
        " defined outside the function is not there, even one imported at the top of the same"
        " cell: only the function's own source runs in the worker, so put its imports, helpers"
        " and constants inside it)"
    )
    other = TRACEBACK.replace("NameError: name 'y' is not defined", "ValueError: v")
    assert worker_error(worker(1, other), source, "<other>") == "your code raised ValueError: v"


def test_check_worker_tells_the_readers_line_from_the_labs():
    source = "def f():\n    g()\n    return y\n"
    assert check_worker(worker(0), source, "<your code>", "/r", "checks.words.none") is None
    with pytest.raises(ReaderCodeError) as theirs:
        check_worker(worker(1, TRACEBACK), source, "<your code>", "/r", "checks.words.none")
    assert theirs.value.run_dir == "/r" and "at line 3: return y" in str(theirs.value)
    labs = "Traceback (most recent call last):\n  File \"/lab/x.py\", line 1\nKeyError: 'k'\n"
    with pytest.raises(UnmetExpectation) as lab:
        check_worker(worker(1, labs), source, "<your code>", "/r", "checks.words.nothing")
    assert str(lab.value) == (
        "nothing (the lab's own code failed after yours returned: KeyError: 'k')"
    )
    assert lab.value.run_dir == "/r"
    with pytest.raises(ReaderCodeError):  # no traceback at all: theirs (an os._exit of theirs)
        check_worker(worker(3, "bye\n"), source, "<your code>", "/r", "checks.words.none")


def test_a_function_is_found_in_a_cells_source_or_the_reader_is_told_what_is_missing():
    assert source_of("  def a():\n      pass\n  def b():\n      pass\n") == (
        "def a():\n    pass\ndef b():\n    pass\n",
        "a",
    )
    assert source_of(test_errors_keep_their_run_folder)[1] == "test_errors_keep_their_run_folder"
    with pytest.raises(ReaderCodeError) as bad:
        source_of("def f(:\n    pass\n")
    assert str(bad.value).startswith("your code raised SyntaxError: ") and "at line 1" in str(
        bad.value
    )
    with pytest.raises(ReaderCodeError, match="needs a function \\(def ...\\), and found none"):
        source_of("x = 1\n")
    with pytest.raises(ReaderCodeError, match="needs a function defined in a cell"):
        source_of(len)
    assert normalized("  a = 1  # x\n\n   \n  b = 2\n") == "a = 1\nb = 2"


def judge(answer):
    if answer == "raise":
        raise ReaderCodeError("bad line", "/r1")
    if answer == "unmet":
        raise UnmetExpectation("lab wants", "/r2")
    return Verdict("correct", f"judged {answer}")


def test_an_exercise_tells_the_starter_from_an_answer_and_shows_errors_as_such():
    code = Exercise("lesson2.safe_step", "x.py", "def f():\n    return ...", judge, code=True)
    assert code.untouched("def f():  # mine\n\n    return ...\n")
    assert not code.untouched("def f():\n    return 1\n") and not code.untouched("def f(:")
    value = Exercise("lesson2.safe_step", "x.py", "x = '???'", judge)
    assert value.untouched({"a": "???", "b": None}) and not value.untouched({"a": "???", "b": 1})
    assert value.untouched(["???", ...]) and not value.untouched([]) and not value.untouched(["x"])
    assert value.untouched("???") and not value.untouched("lost")
    started = value.check("???")
    assert (started.status, started.message) == (
        "not attempted",
        "change the starter, then check again (hint: lesson2.safe_step.hint())",
    )
    assert value.check("x").message == "judged x"
    error = value.check("raise")
    assert (error.status, error.message, error.run_dir) == (
        "error",
        "bad line\nMend it and check again.",
        "/r1",
    )
    unmet = value.check("unmet")
    assert (unmet.status, unmet.message, unmet.run_dir) == ("incorrect", "lab wants", "/r2")


def test_hints_come_one_after_another_and_stop_at_the_last():
    ex = Exercise("lesson2.safe_step", "02_safe_step.py", "", judge)
    assert ex.hints == [f"lesson2.safe_step.hint{n}" for n in (1, 2, 3)]
    first, second, third, again = ex.hint(), ex.hint(), ex.hint(), ex.hint()
    assert first.startswith("Hint 1 of 3: ") and second.startswith("Hint 2 of 3: ")
    assert first.endswith("\n(Call lesson2.safe_step.hint() for the next one.)")
    assert third.startswith("Hint 3 of 3: ") and again == third
    assert third.endswith(
        "\nThat was the last hint; lesson2.safe_step.solution() shows the answer."
    )
    assert ex.hint(1) == first and ex.hint().startswith("Hint 2 of 3: ")
    for bad in (0, 4, 1.0, True):
        with pytest.raises(LabError, match="hint number must be a whole number from 1 to 3"):
            ex.hint(bad)
    solution = ex.solution()
    assert solution.startswith(
        "# %load solutions/02_safe_step.py\ndef my_step(control, effect, gate):"
    )


def test_runs_are_measured_each_on_its_own_and_named_as_the_reader_may_write_them():
    measure = each(lambda case: Measured(case.upper(), "", None))
    assert measure(["a", "b"]) == {"a": Measured("A", "", None), "b": Measured("B", "", None)}
    assert Measured(1, "s", None).failure is None
    assert case_name(" Effect_First / Effect ") == "effect_first/effect"
    assert case_name("before - create  now") == "before_create_now" and case_name(3) == 3
    assert no_verdict("the run", "boom", "/r") == Verdict(
        "no verdict",
        "the run failed (boom), so it says nothing about your answer: check again",
        "/r",
    )
    assert also_in("/a", "/b") == " (look in /a)" and also_in("/a", "/a") == ""
    assert also_in(None, "/b") == "" and also_in("", "/b") == ""


def test_predictions_that_are_not_a_dict_of_the_cases_are_refused_before_any_run():
    asked = []
    said = judge_predictions(["duplicate"], CASES, measured(asked), OUTCOMES)
    assert said == Verdict(
        "incorrect", "give a dict with one prediction for each of: effect_first, atomic, idempotent"
    )
    unknown = judge_predictions({"nope": "lost"}, CASES, measured(asked), OUTCOMES)
    assert unknown.message == (
        "not a case of this exercise: ['nope']; the cases: effect_first, atomic, idempotent"
    )
    twice = judge_predictions(
        {"atomic": "lost", "Atomic ": "lost"}, CASES, measured(asked), OUTCOMES
    )
    assert twice.message.startswith("given twice: ['atomic']; the cases: ")
    misread = judge_predictions(
        {"atomic": "maybe", "effect_first": "???"}, CASES, measured(asked), OUTCOMES
    )
    assert misread.message == (
        "each prediction is one of: duplicate, lost, consistent; not atomic = 'maybe' (nothing"
        " was run)"
    )
    assert asked == []


def test_only_the_answered_cases_run_and_a_wrong_one_says_what_the_real_run_gave():
    asked = []
    predicted = {"Effect_First": "lost", "atomic": "consistent", "idempotent": "???"}
    said = judge_predictions(predicted, CASES, measured(asked), OUTCOMES)
    assert asked == [["effect_first", "atomic"]]
    assert said == Verdict(
        "incorrect",
        "1 of your 2 predictions match real runs; not these:\n"
        "effect_first: you said 'lost', the real run gave 'duplicate' (story of effect_first)\n"
        "Still open: idempotent.",
        "/runs/effect_first",
    )
    both = judge_predictions(
        {"effect_first": "lost", "atomic": "lost"}, CASES, measured([]), OUTCOMES
    )
    assert both.message.startswith("0 of your 2 predictions match real runs; not these:\n")
    assert both.message.endswith(
        "(story of atomic) (look in /runs/atomic)\nStill open: idempotent."
    )
    assert both.run_dir == "/runs/effect_first"


def test_right_predictions_are_incomplete_while_a_case_is_open_and_correct_when_none_is():
    one = judge_predictions({"atomic": "consistent"}, CASES, measured([]), OUTCOMES)
    assert one == Verdict(
        "incomplete",
        "so far so good: the prediction you made matches a real run.\n"
        "Still open: effect_first, idempotent.",
    )
    two = judge_predictions(
        {"atomic": "consistent", "effect_first": "duplicated"}, CASES, measured([]), OUTCOMES
    )
    assert two.message == (
        "so far so good: the 2 predictions you made match real runs.\nStill open: idempotent."
    )
    every = {"effect_first": "duplicate", "atomic": "consistent", "idempotent": "consistent"}
    assert judge_predictions(every, CASES, measured([]), OUTCOMES) == Verdict(
        "correct", "every prediction matches a real run", "/runs/effect_first"
    )


def test_a_real_run_that_failed_by_itself_gives_no_verdict():
    def measure(cases):
        return {
            c: Measured(None, "", f"/runs/{c}", "worker timed out" if c != "effect_first" else None)
            for c in cases
        }

    said = judge_predictions(
        {"effect_first": "lost", "atomic": "lost", "idempotent": "lost"}, CASES, measure, OUTCOMES
    )
    assert said == Verdict(
        "no verdict",
        "the real run of atomic failed (worker timed out), so it says nothing about your answer:"
        " check again",
        "/runs/atomic",
    )


def test_a_form_made_in_a_test_reads_and_says_its_words():
    form = one_of("duplicate", "lost")
    assert (form.key, form.fields) == ("checks.form.one_of", {"words": "duplicate, lost"})
    assert form.says == "one of: duplicate, lost"
    assert [form.read(v) for v in ("Lost.", ["duplicated"], "x", 3)] == [
        "lost",
        "duplicate",
        None,
        None,
    ]
    assert word("Max.") == "max" and word("BOX!") == "box"


def test_each_refusal_and_wrong_answer_is_incorrect_and_says_only_what_is_open():
    refused = [
        judge_predictions({"nope": "lost"}, CASES, measured([]), OUTCOMES),
        judge_predictions({"atomic": "x", "idempotent": "y"}, CASES, measured([]), OUTCOMES),
    ]
    assert [v.status for v in refused] == ["incorrect", "incorrect"]
    assert refused[1].message == (
        "each prediction is one of: duplicate, lost, consistent; not atomic = 'x', idempotent ="
        " 'y' (nothing was run)"
    )
    every = {"effect_first": "lost", "atomic": "consistent", "idempotent": "consistent"}
    wrong = judge_predictions(every, CASES, measured([]), OUTCOMES)
    assert wrong.message.endswith("(story of effect_first)") and "Still open" not in wrong.message


def test_a_planned_exit_is_no_error_and_a_hint_says_its_fields():
    assert check_worker(worker(91), "", "<your code>", "/r", "checks.words.none", (0, 91)) is None
    with pytest.raises(ReaderCodeError, match="got builtin_function_or_method"):
        source_of(len)
    ttl = Exercise("lesson2.shortest_ttl", "x.py", "", judge, hint_fields={"delay": 30})
    assert ttl.hint() == (
        "Hint 1 of 3: "
        + say("lesson2.shortest_ttl.hint1", delay=30)
        + "\n(Call lesson2.shortest_ttl.hint() for the next one.)"
    )
    assert "up to 30 h after the crash" in ttl.hint(1)
    assert ttl.hint(3).startswith("Hint 3 of 3: Retention must be longer than the longest delay")


def test_a_checked_exercises_read_predictions_go_to_the_room_under_its_name_before_any_run(
    monkeypatch,
):
    """Under the hub, the room shows what each participant predicted, per exercise: the
    predictions as the form read them, sent before the runs (the mutants the 2026-12-05 run
    of checks.py and predictions.py left: the exercise's name or the predictions dropped)."""
    from labkit.room import client

    events = []
    monkeypatch.setattr(client, "predict_exercise", lambda *args: events.append(("sent", *args)))
    asked = []

    def measure(cases):
        events.append(("ran", list(cases)))
        return measured(asked)(cases)

    def judge(answer):
        return judge_predictions(answer, CASES, measure, OUTCOMES)

    exercise = Exercise("lesson1.predict_outcomes", "x.py", "x = '???'", judge)
    exercise.check({"Effect_First": " Duplicate ", "atomic": "???", "idempotent": "consistent"})
    read = {"effect_first": "duplicate", "idempotent": "consistent"}
    assert events == [
        ("sent", "lesson1.predict_outcomes", read),
        ("ran", ["effect_first", "idempotent"]),
    ]
    events.clear()
    judge({"atomic": "consistent"})  # not through a check: no exercise to send it for
    assert events == [("ran", ["atomic"])]
