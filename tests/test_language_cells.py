"""A lesson cell's own sentences (issue 19): the small view functions a cell prints, shared by
the English lesson and its Chinese twin, say it in the reader's language; English reads as the
cells printed it before."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

import labkit as lk
from labkit.studies.postgres.spec import WINDOW_ORDERS
from labkit.studies.unknown_outcome.spec import FAULTS, STRATEGIES
from labkit.views.durability import async_behind_text, clean_runs_line, then_and_today
from labkit.views.facts import progress_lines
from labkit.views.interrupt_resume import declined_resume_text
from labkit.views.leases import refusal_text
from labkit.views.outbox import node_runs_text
from labkit.views.postgres import (
    crash_points_text,
    locks_text,
    stub_versus_text,
    window_orders_text,
)
from labkit.views.retries import handler_runs_text, lost_runs_text, stop_text
from labkit.views.text import format_tool_settled
from labkit.views.unknown_outcome import faults_and_strategies


@pytest.fixture(scope="module")
def pending():
    """pending_first killed at `pending`: recovery says unknown, the reconciliation settles it."""
    return lk.run_tool_step("pending_first", kill_at="pending")


def test_a_tool_step_settled_by_the_reconciliation(pending):
    assert pending.outcome == "unknown" and pending.reconciled is not None
    assert format_tool_settled(pending) == (
        "   pending: recovery says unknown    → done=1, receipts=1 after reconciliation"
    )


def test_a_tool_step_settled_by_recovery_and_in_chinese(pending, chinese):
    settled = SimpleNamespace(done=1, receipts=1)
    by_recovery = SimpleNamespace(
        kill_at="committed", outcome="consistent", reconciled=None, after=settled
    )
    assert format_tool_settled(by_recovery) == (
        " committed：恢复判定为一致 → 最终 done=1，receipts=1（恢复之后）"
    )
    assert format_tool_settled(pending) == (
        "   pending：恢复判定为结果未知 → 最终 done=1，receipts=1（核对之后）"
    )


def test_the_faults_and_strategies_line_up_under_their_kind():
    lines = faults_and_strategies().splitlines()
    assert len(lines) == len(FAULTS) + len(STRATEGIES)
    assert lines[0] == f"fault    {'none':15} {FAULTS['none']}"
    assert lines[-1] == f"strategy {'give_up':15} {STRATEGIES['give_up']}"


def test_the_faults_and_strategies_in_chinese(chinese):
    lines = faults_and_strategies().splitlines()
    assert lines[0] == f"故障 {'none':15} {FAULTS['none']}"
    assert lines[-1] == f"策略 {'give_up':15} {STRATEGIES['give_up']}"
    assert re.search(r"[\u4e00-\u9fff]", FAULTS["none"])  # the meanings are Chinese too


LEDGER = [  # run_outbox_graph's ledger: the node committed, was killed, ran again
    {"pid": 101, "wrote_order": True, "wrote_message": True},
    {"pid": 102, "wrote_order": False, "wrote_message": False},
]


def test_the_graphs_node_runs_a_line_each():
    assert node_runs_text(LEDGER).splitlines() == [
        "node run 1 (pid 101) wrote order + message",
        "node run 2 (pid 102) wrote nothing new",
    ]


def test_the_graphs_node_runs_in_chinese(chinese):
    assert node_runs_text(LEDGER).splitlines() == [
        "节点第 1 次运行（pid 101）：写入了订单 + 消息",
        "节点第 2 次运行（pid 102）：没有新内容",
    ]


def test_the_late_write_refused_by_its_token(chinese):
    fenced = lk.run_claim("lease_with_fence", pause_ms=300, lease_ms=200)
    [(writer, token, highest)] = [row[1:] for row in fenced.after.table("refused").rows]
    assert (writer, token, highest) == ("w1", 33, 34)
    assert (
        refusal_text(writer, token, highest) == "w1 带着令牌 33 回来了；接收端此前已接受 34：被拒绝"
    )
    lk.set_language("en")
    assert refusal_text(writer, token, highest) == (
        "w1 came back with token 33; the receiver had accepted 34: refused"
    )


def test_lesson_3_a_declined_resume_per_layout(chinese):
    assert (
        declined_resume_text("split", 0, 1)
        == "   split：Command(resume=False) → 工单 0 张，节点运行 1 次"
    )
    lk.set_language("en")
    assert declined_resume_text("combined", 1, 2) == (
        "combined: Command(resume=False) → tickets 1, node runs 2"
    )


def test_lesson_4_langgraph_then_and_today():
    assert (
        then_and_today("types_py_line", 98, 98) == "types.py line: 98 in study 004, 98 today (same)"
    )
    assert then_and_today("default", "async", "sync") == (
        "default: async in study 004, sync today (today differs)"
    )


def test_lesson_4_langgraph_then_and_today_in_chinese(chinese):
    assert then_and_today("main_py_line", 2696, 2701) == (
        "main.py 行号：研究 004 中为 2696，今天为 2701（今天不同）"
    )


BEHIND = [  # async trials that kept fewer checkpoints than sync (Trial's figures the text reads)
    SimpleNamespace(checkpoints=3, rerun_nodes=["c"]),
    SimpleNamespace(checkpoints=0, rerun_nodes=[]),
]


def test_lesson_4_async_behind_sync_and_what_each_ran_again():
    assert async_behind_text("linear", 4, BEHIND, [*BEHIND, BEHIND[0]]).splitlines() == [
        "linear: async kept fewer than sync's 4 checkpoints in 2 of 3 trials",
        "   kept 3; ran again: c",
        "   kept 0; ran again: (lost)",
    ]
    assert async_behind_text("parallel", 3, [], BEHIND) == (
        "parallel: async kept fewer than sync's 3 checkpoints in 0 of 2 trials"
    )


def test_lesson_4_async_behind_and_clean_runs_in_chinese(chinese):
    assert async_behind_text("linear", 4, BEHIND[1:], BEHIND).splitlines() == [
        "linear：2 次 async 试验中，有 1 次保存的检查点少于 sync 的 4 个",
        "   保存了 0 个；重跑：（丢失）",
    ]
    runs = {"exit": {"seconds": 0.5, "checkpoints": 0}, "sync": {"seconds": 1.25, "checkpoints": 4}}
    assert (
        clean_runs_line(0, runs)
        == "  0 毫秒 put()：exit 0.50 秒（0 个检查点）  sync 1.25 秒（4 个检查点）"
    )


def test_lesson_4_clean_runs_as_the_cell_printed_them():
    runs = {
        "exit": {"seconds": 0.814, "checkpoints": 0},
        "sync": {"seconds": 1.9, "checkpoints": 3},
    }
    assert clean_runs_line(250, runs) == "250 ms put(): exit 0.81 s (0 ckpt)  sync 1.90 s (3 ckpt)"


def test_lesson_7_the_write_orders_and_their_kill_points():
    lines = window_orders_text().splitlines()
    assert len(lines) == 2 * len(WINDOW_ORDERS)
    assert lines[:2] == [
        f"{'effect_first':17} commit the receipt (business session), then done=1 (checkpoint "
        "session): two commits",
        f"{'':17} kill points: effect → checkpoint",
    ]
    assert stub_versus_text(2.5) == "250 ms is 100x this Postgres's median put()"


def test_lesson_7_the_locks_and_crash_points_one_line_each():
    assert locks_text().splitlines()[1] == (
        f"{'for_update':13} SELECT ... FOR UPDATE: the second waits for the first's COMMIT, "
        "reads done=1"
    )
    assert crash_points_text().splitlines()[-1] == (
        f"{'after_commit':17} COMMIT answered: the client knows it is committed"
    )


def test_lesson_7_in_chinese(chinese):
    assert window_orders_text().splitlines()[-1] == (
        f"{'':17} 强杀点：locked → in_transaction → committed"
    )
    assert stub_versus_text(3.1) == "250 毫秒是这台 Postgres 的 put() 中位数的 81 倍"
    assert (
        locks_text().splitlines()[0]
        == f"{'none':13} READ COMMITTED 下的普通 SELECT：两个 worker 都读到 done=0"
    )
    assert "WAL" in crash_points_text() and "COMMIT 尚未发送" in crash_points_text()


def test_lesson_8_the_handlers_runs_and_the_lost_runs():
    assert handler_runs_text("add_node", 1, 1, 2) == "add_node: handler ran 1 + 1 times, 2 refunds"
    assert lost_runs_text("async", 45, 199) == "async: 45 of 199 accepted runs lost (23 %)"
    stopped = {"trials": 20, "most": 200, "margin": 0.1, "interval": [0.0, 0.1611]}
    assert stop_text("sync", stopped) == (
        "sync: stopped after 20 of at most 200 trials: 95 % interval of the lost share 0–16 %,"
        " within ±10 points"
    )
    ran = {"trials": 200, "most": 200, "margin": 0.1, "interval": [0.383, 0.519]}
    assert stop_text("async", ran) == (
        "async: all 200 trials run: 95 % interval of the lost share 38–52 %"
    )


def test_a_long_cells_progress_is_a_line_every_few_trials_and_at_the_last(capsys):
    done = progress_lines(every=5)
    for n in range(1, 13):
        done(n, 12, {"a": "trial"})
    assert capsys.readouterr().out.splitlines() == [
        "trials done: 5/12",
        "trials done: 10/12",
        "trials done: 12/12",
    ]


def test_lesson_8_in_chinese(chinese):
    assert handler_runs_text("defaults", 1, 0, 1) == "defaults：处理函数运行了 1 + 0 次，退款 1 笔"
    assert lost_runs_text("sync", 0, 200) == "sync：已接受的 200 次运行中丢失 0 次（0%）"
    stopped = {"trials": 20, "most": 200, "margin": 0.1, "interval": [0.8389, 1.0]}
    assert stop_text("exit", stopped) == (
        "exit：20 次试验后停止（至多 200 次）：丢失比例的 95% 区间为 84–100%，在 ±10 个百分点之内"
    )


def test_lesson_6_step_modes_moves_are_named_in_chinese(chinese, tmp_path):
    from labkit.studies.leases.stepping import ClaimStepSession
    from labkit.views.leases_lines import move_words

    with ClaimStepSession("lease", pause_ms=300, lease_ms=200, out=tmp_path / "step") as session:
        assert move_words(session.paused_at) == "w1 停在“claimed”；下一步：就地冻结它（SIGSTOP）"
        assert move_words(session.proceed()) == "w1 已冻结；下一步：时钟走到 200 毫秒，w2 来认领"
