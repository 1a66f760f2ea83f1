"""Lesson 9 in Chinese (issue 27, items 1 and 8): a real exploration, read with Chinese chosen,
says its outcomes, what each crash point comes after, what is wrong, its restarts, its summary
and lesson 9's verdict in Chinese, from codes; none of the English of explorer.toml and
lesson9.toml is left, neither a sentence nor a single outcome or operation word. The same
exploration read in English says what it said before the words became codes."""

from __future__ import annotations

import pytest
from chinese import assert_no_english as no_english
from wrong_answers import WRONG

from labkit.bench.trace import read_trace
from labkit.language import set_language
from labkit.studies.explorer.checker import FINDINGS, Finding, outcome_of
from labkit.studies.explorer.replay import explore, unwatched_entry
from labkit.studies.explorer.report import Exploration
from labkit.views.explorer import ExplorerPanel, matrix_html, with_last_commits
from labkit.views.explorer_words import complaint_words, matrix_text
from labkit.views.timeline import TimelineFigure
from labkit.workshop import lesson9

AREAS = ("explorer", "lesson9")
STEP = "labkit.studies.commit_window.worker:effect_first"  # lesson 1's window: a duplicate
GRAPH = "labkit.studies.explorer.lab:linear"  # study 004's a → b → c → d, a ledger line each


WORDS = ("explorer.outcome.", "explorer.verb.")  # "duplicate", "commit": one word each


def assert_no_english(shown: str) -> None:
    """Chinese, with no English sentence of the two catalogues and no English outcome or
    operation word (tests/chinese.py)."""
    no_english(shown, AREAS, WORDS)


def panel_choices(found: Exploration) -> str:
    return "\n".join(label for label, _ in ExplorerPanel(found).pick.options)


@pytest.fixture(scope="module")
def step_found() -> Exploration:
    return explore(STEP)


def test_a_steps_matrix_summary_and_panel_speak_chinese(step_found, chinese):
    assert {p.n: p.outcome for p in step_found.failing} == {1: "duplicate"}  # codes stay codes
    finding = step_found.point(1).finding
    assert finding == {
        "code": "holds_more",
        "file": "effect.db",
        "table": "receipts",
        "count": 2,
        "clean": 1,
    }
    text, html = matrix_text(step_found), matrix_html(step_found)
    assert "提交 effect.db" in text and "effect.db 的表 receipts 有 2 行" in text
    assert "1 个失败：1 重复" in step_found.summary() and ">重复</b>" in html
    assert_no_english("\n".join([text, html, step_found.summary(), panel_choices(step_found)]))


def test_a_failing_points_timeline_names_its_crash_point_in_chinese(step_found, chinese):
    from matplotlib.text import Text

    drawn = TimelineFigure(with_last_commits(read_trace(step_found.point(1).run_dir)))
    drawn.png(None)
    labels = [t.get_text() for t in drawn.fig.findobj(Text)]
    assert "在崩溃点 1 处 SIGKILL" in labels, labels
    assert_no_english("\n".join(labels))


def test_the_same_exploration_read_in_english_says_what_it_said_before(step_found):
    point = step_found.point(1)
    said = "effect.db table receipts holds 2 where the run without a crash left 1"
    assert point.complaint == f"duplicate: {said}"  # the worker's line, as --json gives it
    text = matrix_text(step_found)
    assert (
        "commit effect.db" in text and said in text and ">duplicate</b>" in matrix_html(step_found)
    )
    assert "1 failing: 1 duplicate" in step_found.summary()
    assert "1: commit effect.db → duplicate" in panel_choices(step_found)


def test_a_graphs_matrix_says_its_checkpoints_and_writes_in_chinese(chinese):
    found = explore(GRAPH, "graph")
    assert {p.outcome for p in found.failing} == {"duplicate"}, found.summary()
    text, html = matrix_text(found), matrix_html(found)
    assert "保存 第 -1 步的检查点（input）" in text and "写入 ledger.jsonl" in text
    assert "保存 节点 a 的写入" in text and "ledger.jsonl 有 " in text
    assert_no_english("\n".join([text, html, found.summary(), panel_choices(found)]))


def test_writes_left_unwatched_are_said_in_chinese_from_their_codes(chinese):
    found = Exploration(
        STEP,
        "step",
        "/nowhere",
        unwatched=[
            unwatched_entry("wal", ["effect.db"]),
            unwatched_entry("together", ["a.db", "b.db"], 2),
        ],
    )
    summary = found.summary()
    assert "effect.db 处于 WAL 模式" in summary and "a.db 和 b.db 的 2 次提交被同时看到" in summary
    assert_no_english(summary)
    set_language("en")
    assert "effect.db in WAL mode, beside a -wal file that holds no WAL" in found.summary()
    assert "2 commits to a.db and b.db seen at once" in found.summary()


def test_the_explorers_refusals_are_said_in_chinese_from_their_codes(tmp_path, chinese):
    """Bad input, found in the kernel (a target's form) or by the worker that loads it (a
    name the module does not define, not a function): one line from cli.error, in Chinese."""
    from labkit.bench.errors import LabError
    from labkit.language.refusals import error_line

    (tmp_path / "mod.py").write_text("X = 1\n")
    said = {}
    for target in ("nope", f"{tmp_path}/mod.py:nope", f"{tmp_path}/mod.py:X"):
        with pytest.raises(LabError) as raised:
            explore(target, out=tmp_path / f"out-{len(said)}")
        said[raised.value.code] = error_line(raised.value)
    assert list(said) == ["explore_target_form", "explore_no_name", "explore_not_function"]
    assert said["explore_no_name"] == f"目标 '{tmp_path}/mod.py:nope'：模块里没有定义 'nope'"
    assert said["explore_not_function"].endswith("不是函数（它的类型是 'int'）")
    assert_no_english(said["explore_target_form"].replace("'module:callable'", ""))


def test_lesson_9s_verdict_on_a_uuid4_key_speaks_chinese(chinese):
    answer, _ = WRONG["lesson9.green_matrix"]["a uuid4 key"]
    verdict = lesson9.green_matrix.check(answer)
    assert verdict.status == "incorrect", str(verdict)
    assert "结果为重复" in verdict.message and "effect.db 的表 receipts 有 2 行" in verdict.message
    assert_no_english(str(verdict))


def test_a_checker_that_raises_is_said_in_chinese_around_the_readers_error(tmp_path, chinese):
    (tmp_path / "checks.py").write_text(
        "def picky(state):\n"
        "    if state.point is not None and state.point['n'] == 2:\n"
        "        raise RuntimeError('picky checker')\n"
    )
    found = explore(STEP, checker=f"{tmp_path}/checks.py:picky", out=tmp_path / "x")
    assert found.point(2).failed["code"] == "checker_raised", found.point(2).failed
    error = found.point(2).failed["error"]  # the reader's error, quoted as it is
    assert error.startswith("RuntimeError: picky checker")
    assert f"已停止：检查器抛出了异常：{error}" in found.summary()
    text = matrix_text(found)
    assert f"检查器抛出了异常：{error}" in text and "  失败  " in text
    assert_no_english("\n".join([text, matrix_html(found)]))
    set_language("en")
    assert found.stopped == f"the checker raised {error}"  # the results' line, as before
    assert f"; stopped: the checker raised {error}" in found.summary()


@pytest.mark.parametrize("code", list(FINDINGS))
def test_each_finding_keeps_its_code_and_the_catalogue_says_the_workers_line(code):
    """The default checker's Finding is the worker's line (the results' complaint) and keeps
    its code and fields; from those, the English catalogue says the line word for word
    (without the outcome's word), and the Chinese says it from the same fields."""
    fields = {"file": "effect.db", "table": "receipts", "count": 2, "clean": 1, "error": "E: x"}
    fields |= {"row": "[null, 80]", "clean_row": "[null, 90]"}
    finding = Finding(code, **fields)
    assert finding.as_dict() == {"code": code, **fields}
    assert ("effect.db table receipts" in finding) == ("{what}" in FINDINGS[code])
    outcome = outcome_of(finding)
    said = complaint_words(finding.as_dict(), str(finding), outcome)
    assert said == finding.removeprefix(f"{outcome.replace('_', ' ')}: ")  # "not judged: "
    set_language("zh")
    try:
        assert_no_english(complaint_words(finding.as_dict(), str(finding), outcome))
    finally:
        set_language("en")
