"""A lesson cell's own sentences (issue 19): the small view functions a cell prints, shared by
the English lesson and its Chinese twin, say it in the reader's language; English reads as the
cells printed it before."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

import labkit as lk
from labkit.studies.unknown_outcome.spec import FAULTS, STRATEGIES
from labkit.views.leases import refusal_text
from labkit.views.outbox import node_runs_text
from labkit.views.text import format_tool_settled
from labkit.views.unknown_outcome import faults_and_strategies


@pytest.fixture
def chinese():
    lk.set_language("zh")
    yield
    lk.set_language("en")


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
        refusal_text(writer, token, highest) == "w1 带着令牌 33 回来了；接收方此前已接受 34：被拒绝"
    )
    lk.set_language("en")
    assert refusal_text(writer, token, highest) == (
        "w1 came back with token 33; the receiver had accepted 34: refused"
    )
