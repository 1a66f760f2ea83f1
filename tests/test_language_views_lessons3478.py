"""The Chinese edition of lessons 3, 4, 7 and 8's views: each view, given real runs, speaks
Chinese when the reader chose it (tables, sentences, figures, panels' widgets), with no English
sentence of its catalogue left behind; the English edition says what it said before."""

from __future__ import annotations

import html
import warnings
from collections.abc import Iterable

import ipywidgets as widgets
import pytest
from chinese import CJK, assert_chinese

from labkit.language import catalogue
from labkit.views.figures import figure_png

AREAS = ("durability", "durability_panel", "interrupt_resume", "postgres", "postgres_panel")
AREAS += ("retries",)  # these views' catalogue files


def assert_views_chinese(*shown: str) -> None:
    """Chinese appears, and no English sentence of these views' catalogues does."""
    assert_chinese("\n".join(shown), AREAS)


def png(figure) -> bytes:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns "Glyph ... missing from font(s)"
        return figure_png(figure)


def labels(panel: widgets.Widget) -> list[str]:
    """Every label a panel's widgets show: descriptions, and the options' labels."""
    found, todo = [], [panel]
    while todo:
        widget = todo.pop()
        todo += getattr(widget, "children", ())
        found += [widget.description] if getattr(widget, "description", "") else []
        found += [str(label) for label in getattr(widget, "_options_labels", ())]
    return found


def assert_labels_chinese(panel: widgets.Widget, *words: str) -> None:
    """The panel's words are the Chinese catalogue's; `words` of them are Chinese."""
    shown = labels(panel)
    assert_views_chinese(*shown)
    assert all(CJK.search(word) for word in words), words
    assert set(words) <= set(shown)


@pytest.fixture
def displayed(monkeypatch) -> list:
    """What the show_* functions display (HTML and Image objects), instead of displaying it."""
    import IPython.display

    from labkit.views import durability, interrupt_resume

    shown: list = []
    for module in (IPython.display, durability, interrupt_resume):
        monkeypatch.setattr(module, "display", lambda *objects: shown.extend(objects))
    return shown


def html_of(shown: Iterable) -> str:
    return "".join(item.data for item in shown if isinstance(item.data, str))


# --- lesson 3: study 001


def test_lesson_3s_panel_tickets_and_checkpoint_file_in_chinese(chinese):
    from labkit.studies.interrupt_resume.contract import ask_ticket_service
    from labkit.views.interrupt_resume import InterruptPanel, ticket_answers_html

    panel = InterruptPanel()
    assert_labels_chinese(panel, "运行", "同一进程", "新进程", "恢复执行于")
    assert panel.process.value is False  # the value stays a code: resume in a new process?
    panel.process.value = True
    panel.kill_at.value = "after_create"  # killed before its interrupt was saved
    panel.click()
    assert panel.status.value.startswith("正在运行：键 <b>fresh</b>")
    panel.job.wait()
    assert panel.error is None and panel.result["after_resume"] == 3
    output = panel.output.value
    assert "3 张工单" in output and "恢复执行的进程看到了" in output and "待处理的中断" in output
    assert "<code>invoke(None)，然后 Command(resume=True)</code>" in output
    assert_views_chinese(output, panel.status.value)
    body = '{"title": "Printer offline"}'
    requests = [("team-A", "op-1", body), ("team-A", "op-1", '{"title": "changed"}')]
    answers, tickets = ask_ticket_service(
        [*requests, ("team-A", "op-2", body)], [("team-A", "op-1")]
    )
    shown = ticket_answers_html(answers, tickets)
    said = '拒绝：team-A/op-1 已保存 {"title": "Printer offline"}，不是 {"title": "changed"}'
    assert "成功" in shown and said in html.unescape(
        shown
    )  # the payloads as the service holds them
    assert "拒绝：team-A/op-2 这个键不是入口签发的" in shown and "返回的工单 id" in shown
    assert_views_chinese(shown)


# --- lesson 4: study 004


def test_lesson_4s_panel_table_figure_and_checkpoint_file_in_chinese(chinese):
    from labkit.views.durability import distribution_figure
    from labkit.views.durability_panel import DurabilityPanel

    panel = DurabilityPanel(trials=1)
    assert_labels_chinese(panel, "运行试验", "强杀时机", "试验次数")
    assert "强杀" in panel.status.value
    panel.graphs.value = ("linear",)
    panel.modes.value = ("sync", "exit")
    panel.click()
    panel.job.wait()
    assert panel.error is None and len(panel.trials) == 2
    table, checkpoints = panel.table.value, panel.checkpoints.value
    assert "没有可恢复的内容：这次运行丢失了" in table and "已恢复；重跑了：c（+1 行）" in table
    assert "最后一次试验（exit）的检查点文件" in checkpoints and "（无）" in checkpoints
    assert_views_chinese(table, checkpoints, panel.status.value)
    figure = distribution_figure(panel.trials)
    titles = [ax.get_title() for ax in figure.axes]
    assert titles[0] == "强杀发生时已保存的检查点"
    assert_views_chinese(*titles)
    assert png(figure).startswith(b"\x89PNG")


def test_lesson_4s_pitfalls_library_and_study_figures_in_chinese(chinese, displayed):
    from labkit.studies.durability.experiment import DurabilitySpec, clean_run, run_trials
    from labkit.studies.durability.library import durability_in_library
    from labkit.studies.durability.pitfalls import run_pitfall
    from labkit.views.durability import (
        pitfall_html,
        show_library_facts,
        show_study_figures,
        show_trials,
    )
    from labkit.views.durability_reported import beside_today

    mistyped = run_pitfall("mistyped_durability")
    unknown = pitfall_html("unknown_thread", run_pitfall("unknown_thread"))
    assert "对一个从未存在的 thread_id 调用 invoke(None)" in unknown
    assert "研究 004 当时看到" in unknown
    assert "EmptyInputError: Received no input for __start__" in unknown  # LangGraph's words
    typo = pitfall_html("mistyped_durability", mistyped)
    assert "今天：没有异常；结果：" in typo and "被静默接受" in typo
    show_library_facts(durability_in_library())
    trials = run_trials([DurabilitySpec("parallel", m) for m in ("sync", "async")], trials=1)
    clean = {m: clean_run(DurabilitySpec("linear", m)) for m in ("exit", "async", "sync")}
    show_study_figures(beside_today(trials, trials, {0: clean, 250: clean}, mistyped))
    show_trials(trials)
    shown = html_of(displayed)
    assert "未指定时的默认值：<b>async</b>" in shown and "三档的定义" in shown
    assert "研究 004 报告的" in shown
    assert "比干净运行的 10 行多 6 到 7 行（保留 1 个检查点）" in shown
    assert "运行到结束，n=4（linear 图共 4 个节点），0 条警告" in shown
    assert_views_chinese(unknown, typo, shown)
    (image,) = [item for item in displayed if isinstance(item.data, bytes)]
    assert image.data.startswith(b"\x89PNG")


def test_the_english_edition_of_study_004s_words_is_the_studys_own():
    """The study keeps its pitfalls' English (the command line prints it, a test quotes it);
    the catalogue's English edition says the same, word for word."""
    from labkit.studies.durability.pitfalls import PITFALLS

    english = catalogue("en")
    for name, pitfall in PITFALLS.items():
        assert english[f"durability.pitfall.{name}.title"] == pitfall.title
        assert english[f"durability.pitfall.{name}.said"] == pitfall.study_said


# --- lesson 8: retries, drains, the first checkpoint, the functional API


def test_lesson_8s_tables_and_sentences_in_chinese(chinese):
    from labkit.studies.retries import experiment as lab
    from labkit.views import retries as views

    retry = lab.run_retry("default", "attempt_only")
    text, page = views.format_retry(retry), views.retry_html(retry)
    assert "从未扣款" in text and "支付服务中有 2 笔扣款。" in text and "重试策略 default" in text
    assert "  从未扣款：运行以一张回执结束，但那笔扣款属于另一个订单" in text
    assert "从未扣款" in page and "流水文件：每次尝试一行" in page
    assert "否：返回的是原来那笔" in page
    handler = lab.run_handler("add_node")
    said = views.format_handler(handler) + views.handler_html(handler)
    assert "处理器在第一个进程中运行了 1 次" in said and "ValueError，然后是 str" in said
    drain = [lab.run_drain("kill", work_ms=50), lab.run_drain("term", drain_safe=False)]
    stopped = views.format_drain(drain) + views.drain_html(drain)
    assert "被强杀（-9）" in stopped and "被 SIGTERM 终止（-15）" in stopped
    assert "（无处理器）" in stopped and "SIGKILL：没有任何宽限" in stopped
    functional = lab.run_functional(ref_in_task=False)
    replay = views.format_functional(functional) + views.functional_html(functional)
    assert "在任何 task 之外" in replay and "（两者不同）" in replay and "引用号不同" in replay
    table = lab.default_retry_table()
    retried = views.format_retry_table(table) + views.retry_table_html(table)
    assert "会重试" in retried and "RetryPolicy() 是否重试" in retried
    assert_views_chinese(text, page, said, stopped, replay, retried)


def test_lesson_8s_first_checkpoint_panel_and_figure_in_chinese(chinese):
    from labkit.views.retries import (
        FirstCheckpointPanel,
        first_checkpoint_figure,
        format_first_checkpoint,
    )

    panel = FirstCheckpointPanel(trials=10)
    assert_labels_chinese(panel, "运行试验", "每一档的试验次数")
    panel.modes.value = ("exit",)
    panel.click()
    panel.job.wait()
    assert panel.error is None and panel.results["exit"]["lost"] == 10
    assert "10 次中 10 次" in panel.table.value and "已保存：无" in panel.table.value
    text = format_first_checkpoint(panel.results)
    assert "LangGraph 却没有它的任何痕迹" in text
    figure = first_checkpoint_figure(panel.results)
    words = [t.get_text() for ax in figure.axes for t in [*ax.texts, *ax.get_yticklabels()]]
    assert "无 10" in words and "exit\n丢失 10 次" in words
    assert_views_chinese(
        panel.table.value, panel.status.value, text, *words, figure.axes[0].get_xlabel()
    )
    assert png(figure).startswith(b"\x89PNG")


def test_the_english_edition_of_lesson_8s_choices_is_the_specs_own():
    """spec.py keeps its choices' English (lesson 8's checks quote it); the catalogue's English
    edition says the same, and has a word and a meaning for every code an order's outcome can
    be, and a word for every stop."""
    from labkit.studies.retries.outcome import ORDER_OUTCOMES
    from labkit.studies.retries.spec import DRAIN_SIGNALS, FAILURES, KEYS, POLICIES

    english = catalogue("en")
    for part, choices in (("policy", POLICIES), ("key", KEYS), ("failure", FAILURES)):
        assert {name: english[f"retries.{part}.{name}"] for name in choices} == choices
    assert all(f"retries.order_word.{code}" in english for code in ORDER_OUTCOMES)
    assert all(f"retries.order_meaning.{word}" in english for word in ORDER_OUTCOMES)
    assert all(f"retries.signal.{name}" in english for name in DRAIN_SIGNALS)


# --- lesson 7: Postgres (a real server, started as the lab starts it)


def test_lesson_7s_tables_and_latency_figure_in_chinese(chinese, displayed):
    from labkit.studies.durability.experiment import DurabilitySpec, run_trials
    from labkit.studies.postgres import experiment
    from labkit.views import postgres as views

    window = [experiment.run_window("effect_first", "effect")]
    race = [experiment.run_race("none")]
    text = views.format_rows(views.header("window"), views.window_rows(window))
    assert "强杀时：done/回执" in text and text.splitlines()[-1].endswith("  重复")
    views.show_windows(window)
    views.show_races(race)
    specs = [DurabilitySpec("linear", "sync", 0, "checkpoint_after_b", checkpointer="postgres")]
    trials = run_trials(specs, trials=1)
    views.show_matrix(trials)
    views.show_reruns(trials)
    views.show_latencies({views.setup_name(t): t.put_ms for t in trials})
    shown = html_of(displayed)
    assert ">重复</span>" in shown and "第二个 worker 进程等待于" in shown
    assert ">写入了回执和 done=1</td>" in shown  # what each worker of the race did
    assert "个检查点，重跑：" in shown and "put() 调用次数" in shown and "快" in shown
    assert_views_chinese(text, shown)
    figure = views.latency_figure({"postgres": trials[0].put_ms})
    assert figure.axes[0].get_legend().get_texts()[0].get_text() == "研究 004 的替身：250 毫秒"
    assert_views_chinese(figure.axes[0].get_xlabel())
    assert png(figure).startswith(b"\x89PNG")


def test_lesson_7s_server_crash_panel_in_chinese(chinese):
    from labkit.views.postgres_panel import ServerCrashPanel

    panel = ServerCrashPanel()
    assert_labels_chinese(panel, "强杀点", "运行")
    panel.point.value = "commit_flushed"
    assert "提交记录已刷入 WAL" in panel.meaning.value
    panel.click()
    assert panel.status.value.startswith("正在 <b>commit_flushed</b> 强杀 Postgres 服务器")
    panel.job.wait()
    assert panel.error is None and panel.result.in_flight_survived
    assert "保留" in panel.output.value and "重启的服务器说（" in panel.output.value
    assert '">保留</b>' in panel.output.value  # coloured, as in show_crashes' table
    assert "redo done" in panel.output.value  # the server's own words, as it wrote them
    assert "出错：" in panel.output.value  # the client's COMMIT heard no answer
    assert_views_chinese(panel.output.value, panel.meaning.value)


def test_each_crash_point_of_the_spec_has_one_meaning_in_the_catalogue():
    """The spec names the crash points (a worker's module: codes only); what each means is the
    catalogue's, one for each point and none for a point the spec does not have."""
    from labkit.studies.postgres.spec import CRASH_POINTS

    prefix = "postgres_panel.crash_point."
    meant = [key.removeprefix(prefix) for key in catalogue("en") if key.startswith(prefix)]
    assert meant == list(CRASH_POINTS)
