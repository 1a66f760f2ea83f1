"""The Chinese edition of lessons 5, 6 and 9 and the outbox: their views, rendered for real runs
with Chinese chosen, show Chinese and none of the English sentences of their catalogues
(tables, HTML, text, the timelines' lanes, labels and legends, the panels' widgets); the
studies' tables of meanings follow the language chosen after import; no worker loads the
catalogue."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from chinese import CJK, assert_chinese, english_pieces

import labkit as lk
from labkit.language import Messages
from labkit.views.figures import figure_png

ROOT = Path(__file__).resolve().parents[1]
AREAS = ("unknown_outcome", "outbox", "leases", "explorer")  # this file's catalogue files


def assert_views_chinese(shown: str) -> None:
    """Chinese is shown, and no English sentence of ours (a document's body is data in no
    language: "w1/33/1", its writer, token and write)."""
    assert_chinese(shown, AREAS)


def figure_text(figure) -> str:
    """Every word a figure draws (titles, ticks, labels, annotations, legends), drawn with
    warnings as errors: matplotlib warns of a glyph missing from its fonts."""
    from matplotlib import font_manager
    from matplotlib.text import Text

    font_manager.FontManager._findfont_cached.cache_clear()  # look each font up again
    logged = []
    handler = logging.Handler()
    handler.emit = logged.append  # "findfont: Failed to find font weight bold for ..."
    logger = logging.getLogger("matplotlib.font_manager")
    logger.addHandler(handler)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert figure_png(figure).startswith(b"\x89PNG")
    finally:
        logger.removeHandler(handler)
    assert [r.getMessage() for r in logged if r.levelno >= logging.WARNING] == []
    return "\n".join(t.get_text() for t in figure.findobj(Text))


def widget_text(*widgets) -> str:
    return "\n".join(
        str(getattr(w, name, "")) for w in widgets for name in ("description", "value")
    )


def test_english_sentences_are_found_in_english_output():
    """The check can fail: the English views of a message show its sentences."""
    from labkit.studies.unknown_outcome.outcome import OUTCOMES

    assert "the workflow says done" in OUTCOMES["lost"]
    assert "the workflow says done, but the service holds no ticket" in english_pieces(AREAS)
    with pytest.raises(AssertionError, match="English left: .*the workflow says done"):
        assert_views_chinese(f"丢失 {OUTCOMES['lost']}")


def test_a_studys_table_of_meanings_follows_the_language_chosen_after_import(chinese):
    from labkit.studies.leases.outcome import OUTCOMES
    from labkit.studies.leases.spec import METHODS
    from labkit.studies.outbox.experiment import OUTBOX_KILL_POINTS
    from labkit.studies.unknown_outcome.spec import FAULTS

    assert CJK.search(OUTCOMES["lost_update"]) and CJK.search(METHODS["lease"])
    assert list(FAULTS)[0] == "none" and all(CJK.search(text) for text in FAULTS.values())
    assert OUTBOX_KILL_POINTS["after_deliver"][0] == "relay"
    lk.set_language("en")
    assert OUTBOX_KILL_POINTS["after_deliver"][1] == (
        "the consumer answered; the message is not marked sent"
    )
    assert OUTCOMES["nobody"] == "no write reached the document"
    with pytest.raises(KeyError):
        OUTCOMES["no_such_outcome"]
    with pytest.raises(lk.LabError, match="choose one of: select_then_update, conditional_update"):
        lk.run_claim("x")


def test_messages_is_a_mapping_of_codes():
    table = Messages("leases.graph_cases", ("race", "locked"))
    assert list(table) == ["race", "locked"] and len(table) == 2 and "race" in table
    assert dict(table)["locked"].startswith("the first resumer is frozen")


WORKER_MODULES = (
    "labkit.studies.unknown_outcome.caller",
    "labkit.studies.unknown_outcome.service",
    "labkit.studies.leases.worker",
    "labkit.studies.leases.graph",
    "labkit.studies.outbox.producer",
    "labkit.studies.outbox.relay",
    "labkit.studies.outbox.consumer",
    "labkit.studies.outbox.graph",
    "labkit.studies.explorer.worker",
    "labkit.studies.explorer.steps",
    "labkit.studies.explorer.graphs",
    "labkit.studies.explorer.callables",
    "labkit.studies.explorer.replay",  # explore_in runs in a fork of the trial server
)


def test_no_worker_of_these_studies_loads_the_catalogue():
    code = f"import sys, {', '.join(WORKER_MODULES)}; print('labkit.language' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"


# --- each view, for real runs, in Chinese --------------------------------------------------


def test_lesson5_views_and_panel_speak_chinese(tmp_path, chinese):
    from labkit.studies.unknown_outcome.experiment import run_call
    from labkit.views import unknown_outcome as views

    calls = [
        run_call(strategy, fault, out=tmp_path / f"{strategy}.{fault}")
        for strategy, fault in (("new_key", "reply_lost"), ("give_up", "service_killed"))
    ]
    assert [r.outcome for r in calls] == ["duplicate", "orphan"]
    shown = [views.call_html(r) for r in calls]
    shown += [views.strategies_html(calls), views.call_sweep_html(calls)]
    figures = [figure_text(views.timeline_figure(r)) for r in calls]
    assert "工单服务" in figures[0] and "扣住应答" in figures[0]  # a lane and a service event
    assert "os._exit(91)，强杀点 after commit" in figures[1]  # the service killed
    panel = views.CallPanel("new_key", "reply_lost")
    before = widget_text(panel.strategy, panel.fault, panel.run_button, panel.status)
    panel.click()
    panel.job.wait()
    assert panel.error is None and panel.result.outcome == "duplicate"
    after = widget_text(panel.status, panel.tables)
    assert_views_chinese("\n".join([*shown, *figures, before, after]))


def test_lesson6_views_and_panel_speak_chinese(tmp_path, chinese):
    from labkit.studies.leases.experiment import run_claim
    from labkit.studies.leases.resume import run_graph_race
    from labkit.views import leases as views

    races = [run_claim(m, 300, 200, out=tmp_path / m) for m in ("lease", "lease_with_fence")]
    assert [r.outcome for r in races] == ["lost_update", "refused_late_write"]
    graph = run_graph_race("stalled", out=tmp_path / "graph")
    shown = [views.format_claim(races[0]), views.format_claim_sweep(races)]
    shown += [views.claim_html(races[1]), views.claim_sweep_html(races)]
    shown += [views.format_graph_race(graph), views.graph_race_html(graph)]
    timeline = views.timeline_figure(races[1])
    ticks = [t.get_text() for t in timeline.axes[0].get_yticklabels()]
    assert ticks == ["worker 进程 1", "worker 进程 2"]
    drawn = figure_text(timeline)
    assert "租约 33 于 200 到期" in drawn and "w1 被冻结（SIGSTOP）300 毫秒" in drawn
    assert "迟到的写入被拒绝" in drawn and "丢失更新" in shown[0]  # an outcome's name
    assert not re.search(r"(?i)lost update|refused late write", "\n".join([*shown, drawn]))
    panel = views.LeasePanel("lease", 300, 200)
    before = widget_text(panel.method, panel.pause, panel.lease, panel.run_button, panel.status)
    panel.click()
    panel.job.wait()
    assert panel.error is None and panel.result.outcome == "lost_update"
    after = widget_text(panel.status, panel.tables)
    assert_views_chinese("\n".join([*shown, drawn, before, after]))


def test_outbox_views_speak_chinese(tmp_path, chinese):
    from labkit.studies.outbox.experiment import run_outbox
    from labkit.views import outbox as views

    runs = [
        run_outbox(consumer, kill_at, out=tmp_path / f"{consumer}.{kill_at}")
        for consumer, kill_at in (("plain", "after_deliver"), ("dedupe", "none"))
    ]
    assert [r.outcome for r in runs] == ["duplicate", "consistent"]
    shown = [views.format_outbox(r) for r in runs] + [views.outbox_html(r) for r in runs]
    shown += [views.format_outbox_sweep(runs), views.outbox_sweep_html(runs)]
    timeline = views.outbox_timeline(runs[0])
    ticks = [t.get_text() for t in timeline.axes[0].get_yticklabels()]
    assert ticks == ["生产者", "中继", "消费者"]
    drawn = figure_text(timeline)
    assert "SIGKILL，强杀点 after_deliver" in drawn and "business.db 上的事务" in drawn
    assert ">重复</span>" in shown[2] and "重复：" in shown[0]  # the outcome's name, not its code
    assert not re.search(r"CONSISTENT|DUPLICATE|LOST|NOTHING|FAILED", "\n".join(shown))
    assert_views_chinese("\n".join([*shown, drawn]))


def test_the_explorers_report_and_panel_speak_chinese(chinese):
    from labkit.studies.explorer.replay import explore
    from labkit.views.explorer import ExplorerPanel, matrix_html
    from labkit.views.explorer_words import matrix_text

    found = explore("labkit.studies.commit_window.worker:effect_first")
    assert {p.n: p.outcome for p in found.failing} == {1: "duplicate"}
    shown = [found.summary(), matrix_text(found), matrix_html(found)]
    assert "无崩溃" in shown[1] and "1 个失败：1 重复" in shown[0]
    panel = ExplorerPanel(found)
    buttons = [panel.timeline_button, panel.step_button, panel.kill_button]
    buttons += [panel.next_button, panel.recover_button]
    labels = widget_text(panel.pick, *buttons)
    panel.timeline_button.click()
    timeline = widget_text(panel.status)
    panel.step_button.click()
    paused = widget_text(panel.status, panel.files)
    panel.kill_button.click()
    killed = widget_text(panel.status)
    panel.recover_button.click()
    assert not panel.error_line.value, panel.error_line.value
    assert "恢复之后" in panel.status.value and "重复" in panel.status.value
    assert_views_chinese("\n".join([*shown, labels, timeline, paused, killed, panel.status.value]))
