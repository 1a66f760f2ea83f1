"""The Chinese edition of lessons 1-4's checked exercises: with the language set to Chinese, a
real check of every exercise, with a wrong answer and with the right one, says its verdict,
its message, its hints and its solution's header in Chinese, with none of the English of the
catalogues it says them from; the verdict's status stays the code tests compare."""

from __future__ import annotations

from pathlib import Path

import pytest
from chinese import CJK, assert_chinese
from wrong_answers import RIGHT, WRONG

import labkit as lk
from labkit.language import say
from labkit.workshop import lesson1, lesson2, lesson3, lesson4
from labkit.workshop.checks import WHOLE_NUMBER, Verdict

ROOT = Path(__file__).resolve().parent.parent
AREAS = ("checks", "lesson1", "lesson2", "lesson3", "lesson4")  # their catalogue files


def assert_verdict_chinese(verdict: Verdict, status: str) -> None:
    """The status is the code; what the reader reads (text and HTML) is Chinese only."""
    assert verdict.status == status, str(verdict)
    word = say(f"checks.verdict.{status.replace(' ', '_')}")
    assert CJK.search(word) and str(verdict).startswith(f"{word}：")
    assert f"<b>{word}</b>" in verdict._repr_html_()
    assert CJK.search(verdict.message), verdict.message
    assert_chinese(f"{verdict}\n{verdict._repr_html_()}", AREAS)


def remembered(monkeypatch, module: object, name: str) -> None:
    """The second check of an exercise reads the first one's real runs instead of repeating
    them (its verdict is still made anew, in the language of the moment)."""
    real, seen = getattr(module, name), {}

    def once(*args: object) -> object:
        if repr(args) not in seen:
            seen[repr(args)] = real(*args)
        return seen[repr(args)]

    monkeypatch.setattr(module, name, once)


# Each exercise: a wrong answer of the catalogue (tests/wrong_answers.py) and the functions
# whose real runs its two checks share.
CASES = {
    "lesson1.find_the_window": (lesson1.find_the_window, "the duplicate's point", ["run"]),
    "lesson2.predict_five_cases": (
        lesson2.predict_five_cases,
        "duplicate and lost swapped",
        ["study_000_case"],
    ),
    "lesson2.safe_step": (lesson2.safe_step, "checkpoint first", []),
    "lesson2.bug_hunt": (lesson2.bug_hunt, "uuid1 instead of uuid4", []),
    "lesson2.tool_checklist": (
        lesson2.tool_checklist,
        "the idempotent order repeats",
        ["answer_step"],
    ),
    "lesson3.operation_key": (lesson3.operation_key, "random", []),
    "lesson3.predict_kills": (lesson3.predict_kills, "one ticket each", ["interrupt_case"]),
    "lesson3.release_gate": (lesson3.release_gate, "the refusal alone", ["run_scenario"]),
    "lesson4.choose_durability": (lesson4.choose_durability, "async", ["run_trials"]),
    "lesson4.predict_sync_trial": (lesson4.predict_sync_trial, "no repeat", ["run_trials"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_real_check_says_its_verdict_in_chinese_wrong_and_right(name, chinese, monkeypatch):
    exercise, label, shared = CASES[name]
    module = {"lesson1": lesson1, "lesson2": lesson2, "lesson3": lesson3, "lesson4": lesson4}
    for function in shared:
        remembered(monkeypatch, module[name.split(".")[0]], function)
    assert_verdict_chinese(exercise.check(WRONG[name][label][0]), "incorrect")
    right = next(iter(RIGHT[name].values()))
    assert_verdict_chinese(exercise.check(right), "correct")


@pytest.mark.parametrize("name", list(CASES))
def test_the_starter_hints_and_solution_speak_chinese(name, chinese):
    exercise = CASES[name][0]
    starter = exercise.starter if exercise.code else {"???"}
    assert_verdict_chinese(exercise.check(starter), "not attempted")
    exercise.hints_shown = 0
    shown = [exercise.hint() for _ in exercise.hints]
    total = len(exercise.hints)
    assert [h.split("：")[0] for h in shown] == [f"提示 {n}/{total}" for n in range(1, total + 1)]
    assert all(CJK.search(h.split("\n")[0].split("：", 1)[1]) for h in shown)
    assert "最后一条提示" in shown[-1] and not any("最后一条提示" in h for h in shown[:-1])
    assert_chinese("\n".join(shown), AREAS)
    header = exercise.solution().splitlines()[:2]
    assert header[1].startswith("# 参考答案")
    [lesson] = (ROOT / "notebooks" / "zh").glob(f"0{name[6]}_*.ipynb")
    assert header[0] in lesson.read_text()  # the line the Chinese lesson loads it with


def test_each_hint_says_something_new_in_either_language(chinese):
    for code in ("en", "zh"):
        lk.set_language(code)
        for exercise in (CASES[name][0] for name in CASES):
            texts = [say(key, **exercise.hint_fields) for key in exercise.hints]
            assert len(set(texts)) == len(texts) >= 2, exercise.name


def test_an_errors_and_a_forms_words_follow_the_language_chosen_after_import(chinese):
    """WHOLE_NUMBER and lesson 2's checklist form were made at import: still Chinese now, and
    English again once English is chosen (no run starts: a form error comes first)."""
    typo = lesson2.safe_step.check("def my_step(control, effect, gate)\n    pass\n")
    assert_verdict_chinese(typo, "error")
    assert "SyntaxError" in typo.message and "第 1 行" in typo.message
    garbage = {"before_create": "two"}
    assert_verdict_chinese(lesson3.predict_kills.check(garbage), "incorrect")
    checklist = lesson2.tool_checklist.check({"queue_pop/key": ""})
    assert_verdict_chinese(checklist, "incorrect")
    assert "duplicate, original, next job" in checklist.message  # the codes the reader types
    assert WHOLE_NUMBER.says == say("checks.form.whole_number") != "a whole number"
    lk.set_language("en")
    assert "a whole number, written in digits" in lesson3.predict_kills.check(garbage).message
    assert str(lesson2.safe_step.check("x = 1")).startswith("ERROR: the check needs a function")
