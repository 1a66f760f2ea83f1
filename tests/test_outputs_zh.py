"""Lessons 1-8 in Chinese (issue 27, items 2-5): each view a Chinese lesson shows, on a real
run with Chinese chosen, says its outcomes, processes, refusals, kill points, lanes, legends and
columns in Chinese, from codes: none of the English catalogue's sentences, nor its outcome words
or names (tests/chinese.py), is left in its text, its HTML or its figure's text. Words a file
holds as data (caller.db's status) are the file's, quoted as it holds them."""

from __future__ import annotations

import html
import re

import pytest
from chinese import assert_no_english, assert_no_python

import labkit as lk
from labkit.bench.trace import read_trace
from labkit.studies.commit_window.receiver import deliver_all
from labkit.studies.durability.experiment import DurabilitySpec, run_trials
from labkit.studies.durability.pitfalls import run_pitfall
from labkit.studies.interrupt_resume.contract import ask_ticket_service
from labkit.studies.postgres.experiment import run_window
from labkit.views.call_text import format_call, format_call_sweep
from labkit.views.durability import distribution_figure, pitfall_html
from labkit.views.figures import figure_png
from labkit.views.interrupt_resume import ticket_answers_html
from labkit.views.outbox import (
    format_outbox,
    format_outbox_sweep,
    kill_points_text,
    outbox_html,
    outbox_outcome_counts,
    outbox_sweep_html,
    outbox_timeline,
    outcomes_text,
)
from labkit.views.panel import TimelineView
from labkit.views.tables import deliveries_html, tool_run_html
from labkit.views.text import format_tool_run, process_exits
from labkit.views.timeline import TimelineFigure
from labkit.views.unknown_outcome import (
    call_html,
    call_outcome_counts,
    call_sweep_html,
    strategies_html,
    strategy_outcomes,
    timeline_figure,
)
from labkit.workshop import lesson2

# Our English, written into a run's files and shown as the file holds it: two English words or
# more in a row, read outside tags (a file's own names, table and column, stand alone)
PHRASE = re.compile(r"(?<![\w.])[A-Za-z]{2,}(?: [A-Za-z]{2,})+(?![\w(])")
CALL_WORDS = ("unknown_outcome.name.", "unknown_outcome.status.", "text.op_f.")
CALLER_DB = ("create", "read", "done", "failed", "unknown")  # history.jsonl's f, caller.db's status
OUTBOX_WORDS = ("commit_window.name.", "text.process.", "outbox.timeline.")


def figure_text(fig: object) -> str:
    """Every text a figure draws (titles, labels, annotations, legend, tick labels), drawn first
    so that the tick labels are there."""
    from matplotlib.text import Text

    figure_png(fig)
    return "\n".join(t.get_text() for t in fig.findobj(Text))


@pytest.fixture(scope="module")
def calls():
    return [lk.run_call(s, f) for s, f in [("give_up", "reply_lost"), ("new_key", "reply_lost")]]


def test_lesson_5s_calls_badges_columns_and_timeline_speak_chinese(calls, chinese):
    gave_up = calls[0]
    assert gave_up.outcome == "orphan" and gave_up.status == "failed"  # codes stay codes
    shown = call_html(gave_up)
    assert ">孤儿</span>" in shown
    assert_no_english(shown, ["unknown_outcome"], CALL_WORDS, allowed=CALLER_DB)
    assert_no_english(format_call(gave_up), ["text"], CALL_WORDS, allowed=CALLER_DB)
    # history.jsonl's value for a call without an answer: no value (NULL), not Python's None
    assert_no_python(format_call(gave_up) + shown)
    # the ticket's title is data; "timed out" is Python's socket's own error, quoted
    assert english_phrases(format_call(gave_up) + shown, quoted=("timed out",)) == []
    both = "\n".join([strategies_html(calls), call_sweep_html(calls), format_call_sweep(calls)])
    both += "\n" + call_outcome_counts(calls)  # a sweep's counts, as the lesson prints them
    both += "\n" + strategy_outcomes(calls)  # each strategy's line, as the lesson prints it
    assert "孤儿 1、重复 1" in both
    assert "give_up：1 张工单，意图失败：孤儿" in both and "new_key：2 张工单" in both, both
    assert "创建：未知 → 创建成功：#2" in both and ">重复</span>" in both
    assert_no_english(both, ["unknown_outcome", "text"], CALL_WORDS)
    drawn = figure_text(timeline_figure(gave_up))
    assert "意图：结果未知" in drawn and "创建：未知" in drawn
    assert_no_english(drawn, ["unknown_outcome"], CALL_WORDS)


def test_lesson_5s_outbox_names_its_processes_and_outcomes_in_chinese(chinese):
    plain = lk.run_outbox("plain", kill_at="after_deliver")
    assert plain.outcome == "duplicate" and plain.killed == "relay"
    shown = "\n".join(
        [outbox_html(plain), format_outbox(plain), outbox_sweep_html([plain])]
        + [format_outbox_sweep([plain])]
    )
    assert "中继的消费者 1：退出码 0" in shown
    assert english_phrases(shown) == []  # the order's item is a code: data in no language
    assert_no_english(shown, ["outbox", "text"], OUTBOX_WORDS)
    drawn = figure_text(outbox_timeline(plain))
    assert "生产者" in drawn and "中继的消费者 1" in drawn
    assert_no_english(drawn, ["outbox"], OUTBOX_WORDS)
    # the lesson's own lines: its kill points and outcome words, and a sweep's counts
    lines = "\n".join([kill_points_text(), outcomes_text(), outbox_outcome_counts([plain])])
    assert "在此死去的进程" in lines and "消费者  " in lines and "plain: 重复 1" in lines
    assert_no_english(lines, ["outbox", "text"], OUTBOX_WORDS)


# pending_first's control.db · pending holds its state as a word: "unknown", the file's data
@pytest.mark.parametrize(
    "step,kill_at,data", [("queue_pop", "popped", ()), ("pending_first", "effect", ("unknown",))]
)
def test_a_tool_steps_exits_are_said_per_process_not_as_a_dict(step, kill_at, data, chinese):
    result = lk.run_tool_step(step, kill_at=kill_at)
    shown = tool_run_html(result) + format_tool_run(result)
    assert "首个进程：退出码 91 → 恢复进程：退出码 0" in shown and "{'" not in shown
    words = ("text.process.", "commit_window.name.")
    assert_no_english(shown, ["tables", "text"], words, allowed=data)


def test_lesson_2s_refusal_says_the_payloads_in_chinese(chinese):
    answers, _ = deliver_all([("op-1", "report v1"), ("op-1", "report v2")])
    assert answers[1].refused["code"] == "payload_conflict"  # a code, with its fields
    shown = deliveries_html(answers)
    assert "拒绝：键“op-1”已保存“report v1”，不是“report v2”" in html.unescape(shown)
    assert_no_english(shown, ["tables"], ("tables.deliveries.",))


def test_lesson_3s_refusals_say_why_in_chinese(chinese):
    body = '{"title": "Printer offline"}'
    requests = [("team-A", "op-1", body), ("team-A", "op-1", '{"title": "changed"}')]
    answers, tickets = ask_ticket_service(
        [*requests, ("team-A", "op-2", body)], [("team-A", "op-1")]
    )
    assert [a.refused and a.refused["code"] for a in answers] == [
        None,
        "payload_conflict",
        "not_issued",
    ]
    words = ("interrupt_resume.refused", "interrupt_resume.payload_conflict")
    assert_no_english(ticket_answers_html(answers, tickets), ["interrupt_resume"], words)


def test_lesson_1s_timeline_and_its_captions_speak_chinese(chinese):
    repeated = lk.run("effect_first", kill_at="effect")
    drawn = figure_text(TimelineFigure(read_trace(repeated.run_dir)).fig)
    assert "提交 receipts" in drawn
    assert_no_english(drawn, ["timeline"], ("timeline.",))
    view = TimelineView()
    view.show(repeated)
    captions = []
    for frame in range(view.slider.max + 1):
        view.slider.value = frame
        captions.append(view.caption.value)
    assert any("恢复进程" in c and "退出" in c for c in captions), captions
    # "start" stays: the kill point a "point" event names is a code, as the kill_at menu has it
    words = ("panel.role.", "panel.trace_event.")
    assert_no_english("\n".join(captions), ["panel"], words, allowed=("start",))


def test_lesson_2s_step_check_names_its_kill_points_in_chinese(chinese):
    unsafe = lesson2.safe_step.starter.replace("my_step", "effect_first_step")
    verdict = lesson2.safe_step.check(unsafe)
    assert verdict.status == "incorrect", str(verdict)
    assert "在 `第 1 次提交（effect.db）之后` 强杀" in verdict.message
    assert_no_english(str(verdict), ["lesson2"], ("lesson2.point.",))


def test_lesson_4s_legend_and_the_mistyped_durabilitys_columns_speak_chinese(chinese):
    trials = run_trials([DurabilitySpec(g, "sync") for g in ("linear", "parallel")], trials=1)
    drawn = figure_text(distribution_figure(trials))
    assert "线性图" in drawn and "并行图" in drawn
    assert_no_english(drawn, ["durability"], ("durability.graph.",))
    shown = pitfall_html("mistyped_durability", run_pitfall("mistyped_durability"))
    assert "运行的节点数" in shown
    assert_no_english(shown, ["durability"], ("durability.record.",))


def test_lesson_7s_timeline_names_its_sessions_in_chinese(chinese):
    from labkit.views.postgres import window_outcomes

    result = run_window("effect_first", "effect")
    said = window_outcomes([result])
    assert said == "effect_first 在 effect 被强杀：重复", said
    drawn = figure_text(TimelineFigure(result.events).fig)
    assert "业务会话" in drawn and "检查点会话" in drawn
    assert_no_english(drawn, ["timeline"], ("timeline.",))


def test_the_outbox_graphs_processes_are_named_in_chinese(chinese):
    # run_outbox_graph's processes: "graph" (killed after its node's commit), then "resume"
    shown = process_exits({"graph": -9, "resume": 0, "relay": 0, "relay-consumer-1": 0})
    assert shown.startswith("图的 worker 进程：被 SIGKILL 强杀 → 恢复执行：退出码 0"), shown
    assert_no_english(shown, ["text"], ("text.process.",))


def test_lesson_6s_timeline_names_the_method_and_outcome_in_chinese(chinese):
    from labkit.views.leases_race import timeline_figure as claim_figure

    drawn = figure_text(claim_figure(lk.run_claim("lease", pause_ms=300, lease_ms=200)))
    assert "lease：丢失更新" in drawn and "worker 进程 1" in drawn, drawn
    assert_no_english(drawn, ["leases"], ("leases.name.",))


def test_lesson_8s_first_checkpoint_figure_speaks_chinese(chinese):
    from labkit.studies.retries.experiment import first_checkpoint_modes
    from labkit.views.first_checkpoint import first_checkpoint_figure

    results = first_checkpoint_modes(("async", "exit"), trials=4)
    drawn = figure_text(first_checkpoint_figure(results))
    assert "丢失" in drawn and "检查点" in drawn, drawn
    words = ("retries.saved.", "retries.ended.", "commit_window.name.", "text.process.")
    assert_no_english(drawn, ["retries"], words)


def test_lesson_9s_explorer_timelines_speak_chinese(chinese):
    from matplotlib.figure import Figure

    from labkit.views.explorer import explored, with_last_commits

    step = lk.explore("labkit.studies.commit_window.worker:effect_first")
    graph = lk.explore("labkit.studies.explorer.lab:linear", kind="graph")
    points = explored(step) + explored(graph)
    assert any(p.outcome == "duplicate" for p in points)
    figures = [TimelineFigure(with_last_commits(read_trace(p.run_dir))).fig for p in points]
    assert all(isinstance(f, Figure) for f in figures)
    drawn = "\n".join(figure_text(f) for f in figures)
    assert "崩溃点" in drawn and "恢复 worker 进程" in drawn, drawn
    words = ("timeline.", "explorer.outcome.", "text.process.", "panel.role.")
    assert_no_english(drawn, ["timeline", "explorer"], words)


def test_lesson_6s_cells_say_each_worker_and_the_outcome_not_a_dict(chinese):
    from labkit.views.leases import claim_html, format_claim
    from labkit.views.leases_lines import race_line, renewals_line, sweep_counts

    both = lk.run_claim("select_then_update", pause_ms=300, lease_ms=200)
    short = lk.run_claim("lease_with_fence", pause_ms=100, lease_ms=200)
    by_name = lk.run_claim("renew_by_name", pause_ms=300, lease_ms=200)
    lines = [race_line(both), race_line(short), renewals_line(by_name)]
    lines.append(sweep_counts([both, short, by_name]))
    shown = "\n".join(lines)
    assert lines[0].startswith("w1：令牌 33，写入已应用，已完成 ｜ w2：令牌 33"), lines[0]
    assert lines[0].endswith("结果：两个都执行了"), lines[0]
    assert "w2：认领被拒" in lines[1] and lines[1].endswith("结果：唯一赢家"), lines[1]
    assert "w1 在 300 毫秒按名字续约：找到带它名字的行" in lines[2], lines[2]
    assert "select_then_update  两个都执行了（1 次）" in lines[3], lines[3]
    assert_no_python(shown)
    assert_no_english(shown, ["leases", "facts"], ("leases.name.",))
    # the task's lease_until holds no value under select_then_update: SQL's NULL, not None
    tables = claim_html(both) + format_claim(both)
    assert ">NULL<" in tables and "  NULL" in tables
    assert_no_python(tables)


SERVE_EXITS_3 = """
def serve(graph, inputs, config):
    import os, signal
    signal.signal(signal.SIGTERM, lambda *_: os._exit(3))
    return graph.invoke(inputs, config)
"""


def test_lesson_8s_drain_says_how_a_process_exited_with_its_status_as_a_number(chinese):
    from labkit.studies.retries.experiment import run_drain
    from labkit.views.retries_resumed import drain_rows

    result = run_drain("term", work_ms=100, serve_source=SERVE_EXITS_3)
    assert (result["ended"], result["first_exit"]) == ("exited", 3)  # a code and a number
    [row] = drain_rows([result])
    assert row[1] == "已退出（3）", row
    assert_no_english(" ".join(map(str, row)), ["retries"], ("retries.ended.",))


def test_lesson_9s_cells_say_points_and_verdicts_in_chinese_not_as_dicts(chinese):
    from labkit.views.explorer import ExplorerPanel
    from labkit.views.explorer_lines import outcome_counts, points_text, verdicts_text
    from labkit.views.facts import facts_line

    step = lk.explore("labkit.studies.commit_window.worker:effect_first")
    atomic = lk.explore("labkit.studies.commit_window.worker:atomic", one_file=True)
    lines = [
        verdicts_text({"effect_first": step, "atomic": atomic}),
        points_text(step.points, where=True),
        outcome_counts(step.points),
        facts_line(matrix_green=atomic.green),
        "\n".join(label for label, _ in ExplorerPanel(step).pick.options),
    ]
    shown = "\n".join(lines)
    assert lines[0] == "effect_first：1 重复\natomic：全部一致", lines[0]
    assert "1：提交 effect.db（worker.py:23）→ 重复" in lines[1], lines[1]
    assert lines[2] == "一致（2 个）、重复（1 个）" and lines[3] == "矩阵全绿：是", lines[2:4]
    assert "1：提交 effect.db → 重复" in lines[4], lines[4]  # the panel's menu, said alike
    assert_no_python(shown)
    assert_no_english(shown, ["explorer", "facts"], ("explorer.outcome.", "explorer.verb."))


def test_lesson_3s_run_says_its_outcome_and_how_it_resumed_from_codes(chinese):
    from labkit.views.interrupt_resume import interrupt_html
    from labkit.views.interrupt_text import format_interrupt

    crashed = lk.run_interrupt("fresh", "combined", cross_process=True, kill_at="after_create")
    paused = lk.run_interrupt("fresh", "combined", cross_process=True)
    assert crashed["outcome"] == "duplicate"  # a code, no longer "3 tickets"
    assert crashed["resume"]["resumed_how"] == ["invoke(None)", "Command(resume=True)"]
    shown = html.unescape(interrupt_html(crashed) + interrupt_html(paused))
    assert "invoke(None)，然后 Command(resume=True)" in shown, shown
    assert "待处理的中断<code>（无）</code>" in shown  # none pending after the crash
    assert "{'ticket_id': 1, 'stage': 'receipt_review'}</code>" in shown  # the value, as given
    assert '["{' not in shown  # not a list of its repr
    text = format_interrupt(crashed)
    assert text.startswith(f"结果：{crashed['after_resume']} 张工单"), text
    words = ("interrupt_resume.", "commit_window.name.")
    columns = ("tenant",)  # tickets.db's column, named as the file names it
    assert_no_english(shown + text, ["interrupt_resume", "text"], words, allowed=columns)


def test_lesson_7s_race_says_what_each_worker_did_from_codes(chinese):
    from labkit.studies.postgres.experiment import run_race
    from labkit.studies.postgres.spec import NO_REPLY
    from labkit.views.postgres import race_rows, saw_words

    race = run_race("serializable")
    assert race.reports["second"] == ["retried", "skipped"]  # codes, not an English sentence
    [row] = race_rows([race])
    shown = " ".join(map(str, row))
    assert "遇到序列化失败后重试，然后跳过：done 已经是 1" in shown, shown
    assert saw_words(NO_REPLY) == "没有应答：服务器死掉时它正处于暂停"
    assert_no_english(shown, ["postgres"], ("postgres.did.",), allowed=("serializable",))


def test_lesson_6s_graph_race_names_the_next_nodes_not_a_list(chinese):
    from labkit.views.leases import format_graph_race

    shown = format_graph_race(lk.run_graph_race("claimed"))
    assert "r1：已恢复执行，持令牌 33，看到 next=review" in shown, shown
    assert "下一步 review（中断：“report-17”）" in shown and "下一步无（已结束）" in shown, shown
    assert "['" not in shown and "[]" not in shown, shown
    assert english_phrases(shown) == []  # the interrupt's value and the document's body: data
    assert_no_english(shown, ["leases"], ("leases.name.",))


def test_lesson_6s_locked_resumer_quotes_sqlites_own_error(chinese):
    from labkit.views.leases import format_graph_race

    shown = format_graph_race(lk.run_graph_race("locked"))
    assert "r2：进程死亡，原话“sqlite3.OperationalError: database is locked”" in shown, shown
    assert english_phrases(shown, quoted=("database is locked",)) == []


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (["interrupt", "--kill-at", "after_create", "--cross-process"], "结果：3 张工单\n"),
        (["call"], "NULL"),  # history.jsonl's missing value
    ],
)
def test_the_command_line_says_its_outcomes_in_chinese_without_python(tmp_path, command, said):
    from tests.test_cli_zh import labkit  # the command in Chinese, in a TMPDIR of the test's

    done = labkit(tmp_path, *command)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert said in done.stdout, done.stdout
    assert_no_python(done.stdout)


def english_phrases(shown: str, quoted: tuple[str, ...] = ()) -> list[str]:
    """English phrases in `shown` but the outside words `quoted` (a library's error)."""
    text = re.sub(r"<[^>]+>", "\n", html.unescape(shown))
    for piece in quoted:
        text = text.replace(piece, "")
    return sorted({m.group(0) for m in PHRASE.finditer(text)})


def test_what_runs_write_into_their_files_and_the_views_show_is_in_no_language(chinese):
    """Lesson 8's errors and lesson 6's document are data: a code and values (CardDeclined and
    its order, the document's writer/token/write), or a library's words, quoted as it says
    them; never a sentence of ours in English ("card declined for order-1")."""
    from labkit.studies.retries.experiment import run_retry
    from labkit.views.leases import claim_html, format_claim
    from labkit.views.retries import format_retry, retry_html

    declined = run_retry("every", "order", "declined")
    assert {o["error"] for o in declined["orders"]} >= {"CardDeclined: order-1"}, declined
    bad_reply = run_retry("default", "uuid4", "bad_reply")
    json_said = "Expecting value"  # the json module's words, as its error says them
    assert bad_reply["orders"][0]["error"].startswith(f"ValueError: {json_said}: line 1")
    race = lk.run_claim("lease", pause_ms=300, lease_ms=200)
    document = race.after.table("document").rows  # receiver.db, as the lesson shows it
    assert [row[1:] for row in document] == [["w1/33/1", "w1", 33]], document
    shown = [retry_html(r) + format_retry(r) for r in (declined, bad_reply)]
    shown.append(claim_html(race) + format_claim(race))
    assert english_phrases("\n".join(shown), quoted=(json_said,)) == []


RAISING_STEP = "def my_step(control, effect, gate):\n    raise ValueError(1)\n"
HANGING_STEP = "def my_step(control, effect, gate):\n    import time\n\n    time.sleep(30)\n"


def test_a_failing_runs_reason_is_said_in_chinese_with_the_error_quoted(tmp_path, chinese):
    """Lesson 2's own step that raises, and one that hangs past its timeout: the run claims no
    outcome, and says which worker and why in Chinese; the error's own line (ValueError: 1)
    is quoted as Python says it, the step named as the reader's (你的步骤, not the traceback's
    <your step>), nothing else is English (bench.failures' codes, said at the view)."""
    from labkit.views.tables import run_html
    from labkit.views.text import format_run

    def run(source: str, name: str, **kwargs: object) -> lk.RunResult:
        step = {"step_source": source, "step_name": "my_step", "out": tmp_path / name}
        return lk.execute(lk.RunSpec("idempotent", **step, **kwargs))

    raised, hung = run(RAISING_STEP, "raised"), run(HANGING_STEP, "hung", timeout=0.5)
    assert raised.failure["code"] == "exited" and hung.failure["code"] == "timed_out"
    said = {r.failure["code"]: format_run(r) + run_html(r) for r in (raised, hung)}
    assert (
        "首个 worker 进程退出，退出码 1：原话“ValueError: 1”（你的步骤第 2 行）" in said["exited"]
    )
    assert "首个 worker 进程超时：0.5" in said["timed_out"]  # 0.5 s or just over
    for shown in said.values():
        assert_no_english(
            shown, ["failure", "text", "tables"], ["commit_window.name.", "text.process."]
        )
        assert english_phrases(shown, quoted=("ValueError: 1",)) == []
