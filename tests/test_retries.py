"""Lesson 8: LangGraph's other ways to run a node twice, or not at all. Every test runs real
graphs in workers forked from the trial server and reads back what the files hold: the ledger
(what ran), the payment service's rows (what was charged), the checkpoint file, exit codes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from labkit.bench import server
from labkit.bench.errors import LabError
from labkit.bench.ledger import read_ledger
from labkit.studies.retries import experiment as lab
from labkit.studies.retries.spec import RetrySpec
from tests.wrong_answers import WRONG


def charge_rows(run_dir: str) -> list[tuple]:
    with sqlite3.connect(Path(run_dir) / "tickets.db") as db:
        return db.execute("SELECT id, op_key FROM ticket ORDER BY id").fetchall()


def by_order(result: dict) -> dict[str, dict]:
    assert result["failure"] is None, result["failure"]
    return {order["order"]: order for order in result["orders"]}


def test_the_default_retry_policy_is_read_from_the_installed_library():
    retried = {(row["error"], row["status"]): row["retried"] for row in lab.default_retry_table()}
    assert retried[("ValueError", None)] is False
    assert retried[("TimeoutError", None)] is False  # an OSError: not retried by default
    assert retried[("ConnectionResetError", None)] is True
    assert retried[("labkit.studies.retries.payments.CardDeclined", None)] is True
    assert retried[("httpx.HTTPStatusError", 503)] is True
    assert retried[("httpx.HTTPStatusError", 404)] is False
    # Not "HTTP only on 5xx": a requests 404's Response is falsy, so it is retried (1.2.24).
    assert retried[("requests.exceptions.HTTPError", 404)] is True
    assert retried[("requests.exceptions.ConnectionError", None)] is False


def test_a_timeout_policy_on_a_sync_node_is_refused_by_the_library():
    refusal = lab.sync_timeout_refusal()
    assert refusal.startswith("ValueError: Node timeouts are only supported for async nodes")


def test_a_retry_after_the_charge_charges_again_under_a_new_key(tmp_path):
    result = lab.run_retry("default", "uuid4", "reset", out=tmp_path / "run")
    orders = by_order(result)
    assert [o["attempts"] for o in orders.values()] == [2, 2]  # no crash: LangGraph retried
    assert [o["outcome"] for o in orders.values()] == ["duplicate", "duplicate"]
    assert len(charge_rows(result["run_dir"])) == 4
    attempts = [line["attempt"] for line in read_ledger(result["run_dir"])]
    assert attempts == [1, 2, 1, 2]  # runtime.execution_info.node_attempt
    assert json.loads((tmp_path / "run" / "results.json").read_text())["orders"]


def test_a_key_from_the_order_charges_once_whatever_the_attempts(tmp_path):
    result = lab.run_retry("default", "order", "reset", fail_times=2, out=tmp_path / "run")
    orders = by_order(result)
    assert [o["attempts"] for o in orders.values()] == [3, 3]
    assert [o["outcome"] for o in orders.values()] == ["charged_once", "charged_once"]
    assert charge_rows(result["run_dir"]) == [(1, "order-1"), (2, "order-2")]


def test_node_attempt_in_the_key_charges_per_attempt_and_alone_mixes_orders(tmp_path):
    per_attempt = by_order(lab.run_retry("default", "attempt", out=tmp_path / "a"))
    assert per_attempt["order-1"]["keys"] == ["order-1:1", "order-1:2"]
    assert per_attempt["order-1"]["outcome"] == "duplicate"
    alone = lab.run_retry("default", "attempt_only", out=tmp_path / "b")
    orders = by_order(alone)
    assert orders["order-1"]["outcome"] == "duplicate"  # keys "1" and "2"
    assert orders["order-2"]["outcome"] == "never_charged"  # it got order-1's charges back
    assert orders["order-2"]["receipt"] == orders["order-1"]["receipt"]
    assert len(charge_rows(alone["run_dir"])) == 2


def test_the_default_policy_leaves_a_charged_order_failed_after_a_timeout_error(tmp_path):
    orders = by_order(lab.run_retry("default", "order", "timeout", orders=1, out=tmp_path / "r"))
    assert orders["order-1"]["attempts"] == 1
    assert orders["order-1"]["outcome"] == "charged_run_failed"
    assert orders["order-1"]["error"].startswith("TimeoutError")


def test_retrying_every_exception_retries_a_declined_card(tmp_path):
    every = by_order(lab.run_retry("every", "order", "declined", orders=1, out=tmp_path / "e"))
    transient = lab.run_retry("transient", "order", "declined", orders=1, out=tmp_path / "t")
    assert every["order-1"]["attempts"] == 3 and every["order-1"]["outcome"] == "declined"
    assert by_order(transient)["order-1"]["attempts"] == 1
    assert transient["charges"] == [] and not (Path(transient["run_dir"]) / "tickets.db").exists()


def test_a_timed_out_async_attempt_had_charged_and_its_retry_charges_again(tmp_path):
    fresh = by_order(lab.run_retry("default", "uuid4", asynchronous=True, out=tmp_path / "u"))
    assert [o["new_charges"] for o in fresh.values()] == [2, 2]
    keyed = lab.run_retry("transient", "order", asynchronous=True, orders=1, out=tmp_path / "k")
    assert by_order(keyed)["order-1"]["outcome"] == "charged_once"
    unretried = lab.run_retry("none", "order", asynchronous=True, orders=1, out=tmp_path / "n")
    assert by_order(unretried)["order-1"]["error"].startswith("NodeTimeoutError")


@pytest.mark.parametrize("way", ["add_node", "defaults"])
def test_an_error_handler_runs_again_on_resume_issue_9002(tmp_path, way):
    result = lab.run_handler(way, keyed=False, out=tmp_path / "run")
    assert result["failure"] is None, result["failure"]
    assert result["handler_runs"] == {"first": 1, "resume": 1}
    assert len(result["refunds"]) == 2 and len(charge_rows(result["run_dir"])) == 2
    assert result["handler_saw"] == ["ValueError", "str"]  # on resume, the error is a string
    assert result["resume"]["log"] == ["approved", "refund #2"]  # refund #1's write replaced


def test_a_keyed_refund_is_paid_once_though_the_handler_runs_twice(tmp_path):
    result = lab.run_handler("add_node", keyed=True, out=tmp_path / "run")
    assert result["handler_runs"] == {"first": 1, "resume": 1}
    assert charge_rows(result["run_dir"]) == [(1, "refund:order-1")]


@pytest.mark.parametrize("signal", ["drain", "term"])
def test_a_drained_run_saves_b_and_resumes_at_c(tmp_path, signal):
    result = lab.run_drain(signal, work_ms=100, out=tmp_path / "run")
    assert result["failure"] is None and result["ended"] == "exited"
    assert result["first_exit"] == 0 and result["checkpoints_at_stop"] == 4
    assert result["resume"]["found_next"] == ["c"]
    assert result["ran"] == {"first": ["a", "b"], "resume": ["c", "d"]}
    assert result["rerun_nodes"] == []


@pytest.mark.parametrize(
    ("options", "ended", "exit_code"),
    [
        ({"signal": "kill"}, "killed", -9),
        ({"signal": "term", "grace": 0.02}, "killed_after_grace", -9),
        ({"signal": "term", "drain_safe": False}, "terminated_by_sigterm", -15),
    ],
)
def test_a_run_stopped_without_a_drain_runs_b_again(tmp_path, options, ended, exit_code):
    result = lab.run_drain(**options, work_ms=100, out=tmp_path / "run")
    assert result["failure"] is None and result["ended"] == ended
    assert result["first_exit"] == exit_code and result["checkpoints_at_stop"] == 3
    assert result["ran"] == {"first": ["a", "b"], "resume": ["b", "c", "d"]}
    assert result["rerun_nodes"] == ["b"]


IGNORES_SIGTERM = WRONG["lesson8.drain_safe"]["SIGTERM ignored"][0]
LINGERS = WRONG["lesson8.drain_safe"]["drained, then lingering past the grace"][0]


@pytest.mark.parametrize(
    ("serve_source", "frozen_ms", "ended", "rerun"),
    [
        # ignores SIGTERM: b, c and d end 200, 400 and 600 ms after it, past the grace's 500
        (IGNORES_SIGTERM, (300, 800), "killed_after_grace", True),
        # drains after b, then sleeps a second before it returns: past the grace too
        (LINGERS, (300, 1300), "killed_after_grace", False),
        # the lab's own serve drains after b, 200 ms in: the time it waits is not its own
        (None, (100, 800), "exited", False),
    ],
)
def test_a_parent_frozen_as_the_grace_ends_changes_no_stop(
    tmp_path, serve_source, frozen_ms, ended, rerun
):
    """The trial server (which times the grace) is frozen by SIGSTOP from `frozen_ms[0]` to
    `frozen_ms[1]` after b starts: the worker's own clock still decides. Before, a worker that
    ignored SIGTERM, or a serve that lingered after its drain, ran to its end while the parent
    slept, and passed for drained; and a frozen parent's time was taken from a drain."""
    run_dir = tmp_path / "run"
    freezer = threading.Thread(target=freeze_server, args=(run_dir, *frozen_ms))
    freezer.start()
    try:
        result = lab.run_drain(
            "term", grace=0.5, work_ms=200, serve_source=serve_source, out=run_dir
        )
    finally:
        freezer.join()
    assert result["failure"] is None and result["ended"] == ended
    assert "c" in result["ran"]["first"] if rerun else result["ran"]["first"] == ["a", "b"]
    assert bool(result["rerun_nodes"]) is rerun


def freeze_server(run_dir: Path, start_ms: int, end_ms: int) -> None:
    """SIGSTOP the trial server `start_ms` after b's start in the run's ledger, SIGCONT it
    at `end_ms`."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        started = [ln["t_ns"] for ln in read_ledger(run_dir) if ln["node"] == "b"]
        if started:
            break
        time.sleep(0.002)
    else:
        return
    pid = server._server.process.pid
    time.sleep(max(started[0] / 1e9 + start_ms / 1000 - time.monotonic(), 0))
    os.kill(pid, signal.SIGSTOP)
    try:
        time.sleep((end_ms - start_ms) / 1000)
    finally:
        os.kill(pid, signal.SIGCONT)


def test_the_first_checkpoint_sync_keeps_every_accepted_run_exit_none(tmp_path):
    seen = []
    sync = lab.first_checkpoint("sync", 15, out=tmp_path / "s", progress=lambda *a: seen.append(a))
    assert [done for done, _, _ in seen] == list(range(1, 16)) and seen[-1][1] == 15
    assert sync["saved"] == {"input+loop": 15} and sync["lost"] == 0 and sync["failed"] == 0
    exit_mode = lab.first_checkpoint("exit", 15, out=tmp_path / "e")
    assert exit_mode["saved"] == {"nothing": 15} and exit_mode["lost"] == 15
    trial = Path(exit_mode["runs"][0]["run_dir"])
    assert [line["phase"] for line in read_ledger(trial)] == ["accepted"]  # the caller's own
    assert "EmptyInputError" in json.loads((trial / "recovery.json").read_text())["error"]


def test_the_first_checkpoint_async_distribution_adds_up(tmp_path):
    result = lab.first_checkpoint("async", 20, out=tmp_path / "a")
    assert result["failed"] == 0 and sum(result["saved"].values()) == 20
    assert set(result["saved"]) <= {"nothing", "input", "input+loop"}
    assert result["lost"] == result["saved"].get("nothing", 0)


def test_a_margin_stops_a_mode_once_its_lost_share_is_clear(tmp_path):
    seen = []
    sync = lab.first_checkpoint(
        "sync", 200, out=tmp_path / "s", margin=0.1, progress=lambda *a: seen.append(a)
    )  # every run kept: the 95 % interval is 0-16 % after 20, the least a mode runs
    assert sync["trials"] == len(sync["runs"]) == 20 and sync["most"] == 200
    assert sync["saved"] == {"input+loop": 20} and sync["lost"] == 0
    assert sync["interval"] == [0.0, 0.1611] and seen[-1][:2] == (20, 200)
    exit_mode = lab.first_checkpoint("exit", 200, out=tmp_path / "e", margin=0.1)
    assert exit_mode["trials"] == 20 and exit_mode["lost"] == 20
    assert exit_mode["interval"] == [0.8389, 1.0]
    assert len(list((tmp_path / "e").glob("trial-*"))) == 20  # no trial ran past the stop
    every = lab.first_checkpoint("exit", 25, out=tmp_path / "a")  # no margin: every trial
    assert every["trials"] == 25 and every["margin"] == 0


def test_the_sequential_stop_waits_for_a_split_to_be_clear():
    from labkit.studies.retries.sequential import clear_enough, wilson

    assert not clear_enough(0, 19, 0.1) and clear_enough(0, 20, 0.1)  # LEAST trials first
    assert not clear_enough(9, 20, 0.1)  # a split: 9 of 20 is 26-66 %
    assert not clear_enough(41, 91, 0.1) and clear_enough(41, 92, 0.1)
    assert not clear_enough(0, 2000, 0)  # no margin: never early
    low, high = wilson(90, 200)
    assert (round(low, 3), round(high, 3)) == (0.383, 0.519)


def test_the_entrypoint_runs_again_and_a_finished_task_does_not(tmp_path):
    outside = lab.run_functional(ref_in_task=False, out=tmp_path / "o")
    assert outside["failure"] is None
    assert outside["runs"] == {"entrypoint": 2, "charge": 1, "ship": 2}
    assert outside["charged_ref"] != outside["shipped_ref"]  # made again outside any task
    assert len(charge_rows(outside["run_dir"])) == 1
    inside = lab.run_functional(ref_in_task=True, out=tmp_path / "i")
    assert inside["charged_ref"] == inside["shipped_ref"]


def test_the_kill_waits_for_a_finished_tasks_result_to_be_saved(tmp_path):
    # LangGraph saves a task's result from a thread of its own: with a slow store, `ship`
    # starts long before `charge`'s result is in the file, and a kill then would run it again
    slow = lab.run_functional(ref_in_task=True, out=tmp_path / "slow", writes_delay_ms=300)
    assert slow["failure"] is None
    assert slow["runs"] == {"entrypoint": 2, "charge": 1, "ship": 2}
    assert slow["charged_ref"] == slow["shipped_ref"]
    assert len(charge_rows(slow["run_dir"])) == 1


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda: RetrySpec(policy="sometimes"), "unknown retry policy 'sometimes'; choose one of"),
        (lambda: lab.run_retry(key="random"), "unknown key 'random'; choose one of: uuid4"),
        (lambda: lab.run_drain("hup"), "unknown signal 'hup'; choose one of: drain, term, kill"),
        (lambda: lab.first_checkpoint("fast"), "unknown durability mode 'fast'"),
        (lambda: lab.first_checkpoint(trials=0), "trials must be a whole number from 1"),
        (lambda: lab.first_checkpoint(margin=0.9), "margin must be a number above 0"),
        (lambda: lab.first_checkpoint(margin="wide"), "margin must be a number above 0"),
        (lambda: lab.run_drain(grace=-1), "grace must be a number above 0"),
        (
            lambda: lab.run_functional(writes_delay_ms=-1),
            "writes_delay_ms must be a whole number from 0 to 5000, not -1",
        ),
        (lambda: lab.first_checkpoint_modes(("sync", "nope")), "unknown durability mode 'nope'"),
    ],
)
def test_bad_input_is_one_line_before_anything_runs(call, says):
    with pytest.raises(LabError, match=None) as raised:
        call()
    assert says in str(raised.value) and "\n" not in str(raised.value)


def test_an_existing_output_folder_is_refused(tmp_path):
    with pytest.raises(LabError, match="already exists"):
        lab.run_retry(out=tmp_path)


def test_the_kernel_side_of_lesson_8_never_imports_langgraph():
    probe = (
        "import sys, labkit.studies.retries.experiment, labkit.studies.retries.outcome, "
        "labkit.cli.retries, labkit.views.retries, labkit.workshop.lesson8; "
        "print('langgraph' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_the_command_line_runs_each_section_and_prints_json(tmp_path, capsys):
    from labkit.cli import main

    assert main(["drain", "--signal", "kill", "--work-ms", "50", "--json"]) == 0
    killed = json.loads(capsys.readouterr().out)
    assert killed["first_exit"] == -9 and killed["rerun_nodes"] == ["b"]
    assert main(["retry", "--policy", "transient", "--key", "order", "--failure", "timeout"]) == 0
    text = capsys.readouterr().out
    assert "charged once" in text and "The payment service holds 2 charges." in text
    assert main(["first-checkpoint", "--mode", "exit", "--trials", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["exit"]["lost"] == 3


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["retry", "--policy", "sometimes"], "unknown retry policy 'sometimes'; choose one of"),
        (["drain", "--signal", "hup"], "unknown signal 'hup'; choose one of: drain, term, kill"),
        (["drain", "--grace", "soon"], "a number of seconds, not 'soon'"),
        (["first-checkpoint", "--mode", "fast"], "choose one of: sync, async, exit, all"),
        (["first-checkpoint", "--trials", "0"], "trials must be a whole number from 1 to"),
        (["error-handler", "--way", "decorator"], "unknown error handler way 'decorator'"),
    ],
)
def test_bad_input_on_the_command_line_is_one_line_and_status_2(argv, says):
    done = subprocess.run(
        [sys.executable, "-m", "labkit", *argv], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr


def test_the_first_checkpoint_benchmark_runs_and_prints_each_mode():
    bench = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_first_checkpoint.py"
    done = subprocess.run(
        [sys.executable, str(bench), "--trials", "3"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=bench.parent,
    )
    assert done.returncode == 0, done.stderr
    assert all(f"{mode}: 3 trials in" in done.stdout for mode in ("sync", "async", "exit"))
    assert "held at the kill: nothing 3; lost 3" in done.stdout  # exit mode


def test_the_panel_runs_the_distribution_with_its_bar_and_draws_it():
    from labkit.views.retries import (
        FirstCheckpointPanel,
        attempt_rows,
        format_retry,
        retry_html,
    )

    panel = FirstCheckpointPanel(trials=10)
    assert panel.figure.layout.display == "none"  # no picture yet: no broken-image icon
    panel.modes.value = ("exit",)
    panel.click()
    assert panel.run_button.disabled  # while it runs
    panel.job.wait()
    assert panel.error is None and panel.results["exit"]["lost"] == 10
    assert panel.progress.value == panel.progress.max == 10
    assert "exit" in panel.table.value and bytes(panel.figure.value).startswith(b"\x89PNG")
    assert panel.figure.layout.display is None
    assert not panel.run_button.disabled
    result = lab.run_retry("default", "attempt_only")
    assert "NEVER CHARGED" in retry_html(result) and "never charged" in format_retry(result)
    ledger = attempt_rows(result)  # order-2's first attempt got order-1's charge back
    assert ledger[2] == ("order-2", 1, "charged", "1", "#1", "no: the original came back")
