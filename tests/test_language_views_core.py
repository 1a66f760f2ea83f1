"""The Chinese edition of study 000's views: real runs shown in Chinese say it in Chinese, with
none of the English sentences of their catalogues left in; tables line up by display width;
the timeline draws every Chinese glyph; English stays as it was (test_show, test_panels, ...)."""

from __future__ import annotations

import re
import threading
import unicodedata
import warnings
from types import SimpleNamespace

import ipywidgets as widgets
import pytest
from chinese import CJK, assert_chinese, english_pieces
from matplotlib.text import Text

import labkit as lk
from labkit.bench.trace import read_trace
from labkit.language import display_width
from labkit.views.background import BackgroundJob
from labkit.views.commit_window_words import describe_state, outcome_name, outcome_text
from labkit.views.panel import CrashPanel
from labkit.views.step_panel import StepPanel
from labkit.views.sweep_panel import SweepPanel
from labkit.views.tables import (
    deliveries_html,
    orders_html,
    run_html,
    study_table_html,
    sweep_html,
    tool_run_html,
)
from labkit.views.text import (
    format_grid,
    format_run,
    format_snapshot,
    format_sweep,
    format_tool_run,
    process_exits,
)
from labkit.views.timeline import TimelineFigure

AREAS = (
    "background",
    "commit_window",
    "panel",
    "step_panel",
    "sweep_panel",
    "tables",
    "text",
    "timeline",
)  # these views' catalogue files


@pytest.fixture(scope="module")
def duplicate():
    return lk.run("effect_first", "effect")


def test_the_english_phrases_are_found():
    """The check below looks for real sentences (else it could pass by finding nothing)."""
    assert {
        "first worker exit",
        "The files after recovery",
        "commit window, left open by the kill",
    } <= english_pieces(AREAS)


def test_a_run_its_tool_steps_and_study_table_in_chinese(chinese, duplicate):
    tool = lk.run_tool_step("pending_first", "pending")
    assert tool.outcome == "unknown" and tool.reconciled is not None
    shown = [
        format_run(duplicate),
        run_html(duplicate),
        study_table_html([duplicate]),
        format_tool_run(tool),
        tool_run_html(tool),
        orders_html(),
        describe_state(duplicate.after),
        outcome_text("failed", "OSError"),
        process_exits({"study": 0, "first": -9, "resume": -15, "recover": 0}),
    ]
    for text in shown:
        assert_chinese(text, AREAS)
    assert "结果：重复：不止一条回执" in shown[0] and "← 恢复时新增" in shown[0]
    assert describe_state(duplicate.after) == "done=1，2 条回执（重复）"
    assert outcome_name(duplicate.outcome) == "重复" and duplicate.outcome == "duplicate"
    assert (
        "先在检查点里保存" in shown[4] and "对账后" in shown[4]
    )  # the worker's module has no words


def test_a_receivers_answers_in_chinese(chinese):
    answers, held = lk.deliver_all([("op-1", "v1"), ("op-1", "v1"), ("op-1", "v2")])
    shown = deliveries_html(answers)
    assert_chinese(shown, AREAS)
    assert shown.count("接受") == 2 and shown.count("拒绝：") == 1


def test_the_english_run_is_english(duplicate):
    """lk.set_language("en") (the default) shows no Chinese at all."""
    for text in (format_run(duplicate), run_html(duplicate), orders_html()):
        assert not CJK.search(text)
    assert "  outcome: DUPLICATE: more than one receipt" in format_run(duplicate)


def test_chinese_columns_line_up_by_display_width():
    grid = format_grid(("写入顺序", "结果"), [("atomic", "一致"), ("提交窗口", "lost")])
    assert grid.splitlines() == [
        "写入顺序  结果",
        "--------  ----",
        "atomic    一致",
        "提交窗口  lost",
    ]
    assert display_width("提交窗口（x）") == 13


def test_a_snapshots_marks_line_up_in_chinese(chinese, duplicate):
    lines = format_snapshot(duplicate.after, duplicate.before).splitlines()
    receipts = lines[lines.index("effect.db · receipts") + 1 :]
    dashes, added = receipts[1], receipts[-1]
    wide = sum(
        unicodedata.east_asian_width(c) in "WF" for c in added
    )  # counted here, not by labkit
    assert added.endswith("← 恢复时新增") and len(added) + wide == len(dashes)


def test_the_timeline_draws_chinese_with_every_glyph(chinese, duplicate):
    figure = TimelineFigure(read_trace(duplicate.run_dir))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns "Glyph ... missing from font(s)"
        assert figure.png(3).startswith(b"\x89PNG")
    words = "\n".join(t.get_text() for t in figure.fig.findobj(Text))
    assert "首个 worker 进程" in words and "提交窗口，强杀后仍开着" in words
    assert_chinese(words, AREAS)


def panel_text(box: widgets.Box) -> str:
    """Every label (a widget's description) and every HTML a panel shows, in all its boxes."""
    parts = []
    for widget in box.children:
        if isinstance(widget, widgets.Box):
            parts.append(panel_text(widget))
        if isinstance(widget, widgets.HTML):
            parts.append(widget.value)
        parts.append(getattr(widget, "description", ""))
    return "\n".join(parts)


def test_the_crash_panel_in_chinese(chinese):
    panel = CrashPanel(order="checkpoint_first", kill_at="checkpoint")
    assert_chinese(panel_text(panel), AREAS)
    assert panel.run_button.description == "运行" and panel.kill_at.value == "checkpoint"
    panel.click()
    running = "正在运行 <b>checkpoint_first</b>，在 <b>checkpoint</b> 强杀"
    assert panel.status.value.startswith(running)
    panel.job.wait()
    assert panel.error is None and panel.result.outcome == "lost"
    assert "丢失" in panel.outcome.value and "完成：" in panel.status.value
    assert_chinese(panel_text(panel), AREAS)
    assert "事件" in panel.timeline.caption.value and panel.timeline.image.value[:4] == b"\x89PNG"


def test_the_sweep_panel_in_chinese(chinese):
    panel = SweepPanel()
    assert_chinese(panel_text(panel), AREAS)
    panel.click()
    assert panel.status.value.startswith("正在扫描每个写入顺序的每个强杀点（exit）")
    panel.job.wait()
    assert panel.error is None and len(panel.results) == 12
    assert panel.status.value.startswith("完成：12 次运行，用时")
    assert_chinese(panel_text(panel), AREAS)
    assert_chinese(format_sweep(panel.results), AREAS)
    assert_chinese(sweep_html(panel.results), AREAS)


def test_the_step_panel_in_chinese(chinese):
    panel = StepPanel("effect_first")
    assert_chinese(panel_text(panel), AREAS)
    panel.start_button.click()
    assert panel.error is None and panel.status.value.startswith("停在 <b>start</b>")
    panel.continue_button.click()
    panel.kill_button.click()
    assert panel.status.value.startswith("在 <b>effect</b> 处 SIGKILL")
    assert_chinese(panel_text(panel), AREAS)
    panel.recover_button.click()
    panel.job.wait()
    assert panel.error is None and "重复" in panel.status.value
    assert_chinese(panel_text(panel), AREAS)


def test_a_stopped_and_a_failed_job_say_so_in_chinese(chinese):
    """The background job's own lines, for any panel: Stop after a report, and an error."""
    panel = SimpleNamespace(status=widgets.HTML(), error_line=widgets.HTML(), error=None)
    job = BackgroundJob(panel, [], "次试验", stoppable=True)
    reported = threading.Event()

    def work(report):
        for done in range(1000):
            report(done, 1000)
            reported.set()
            threading.Event().wait(0.01)

    job.start("试", work, lambda result: None)
    assert reported.wait(30)
    job.stop()
    assert panel.status.value.startswith(("正在停止", "已停止"))  # said at once (or done already)
    job.wait()
    assert re.match(r"已停止，1000 次试验中完成了 \d+：", panel.status.value)
    job.start("试", lambda report: 1 / 0, lambda result: None)
    job.wait()
    assert panel.status.value.startswith("失败，用时") and isinstance(
        panel.error, ZeroDivisionError
    )
    assert job.stop_button.description == "停止"
