"""Lesson 8's judges say exactly what each run showed (issue 33: the mutants mutmut left in
workshop/lesson8.py): a plan's form, the three troubles each plan is put through and in which
order, each way an order can end wrong, each way a stop can fail to drain, and a failure of
the run's own that a serve hides, to the word.

The runs here are stand-ins for `run_retry` and `run_drain`, shaped as theirs are (the
orders' rows, the nodes each process ran, how the first one ended): tests/test_retries.py
runs the real ones, and tests/test_exercises.py checks each exercise for real.
"""

from __future__ import annotations

import pytest

from labkit.workshop import lesson8

SERVE = "def serve(graph, inputs, config):\n    return graph.invoke(inputs, config, x=1)\n"


def order(name: str, outcome: str, attempts: int = 1, charges: int = 1, **more: object) -> dict:
    keys = more.pop("keys", [f"{name}-key"] * attempts)
    end = {"receipt": more.pop("receipt", 7), "error": more.pop("error", None)}
    return {
        "order": name,
        "attempts": attempts,
        "new_charges": charges,
        "keys": keys,
        **end,
        "outcome": outcome,
    }


RIGHT = [order("order-1", "charged_once"), order("order-2", "charged_once")]
DECLINED = [
    order("order-1", "declined", charges=0, receipt=None, error="CardDeclined: no"),
    order("order-2", "declined", charges=0, receipt=None, error="CardDeclined: no"),
]


class Shop:
    """run_retry's stand-in: each trouble's orders as given; keeps what each call asked."""

    def __init__(self, monkeypatch, **orders: list[dict]) -> None:
        self.orders, self.asked = orders, []
        self.failures = {}
        monkeypatch.setattr(lesson8, "run_retry", self.run)

    def run(self, policy: str, key: str, failure: str) -> dict:
        self.asked.append((policy, key, failure))
        return {
            "orders": self.orders.get(failure, DECLINED if failure == "declined" else RIGHT),
            "failure": self.failures.get(failure),
            "run_dir": f"/runs/{failure}",
        }


def test_a_right_plan_is_put_through_a_reset_a_timeout_and_a_decline(monkeypatch):
    shop = Shop(monkeypatch)
    verdict = lesson8.charge_once.check({"policy": " Transient.", "key": "ORDER"})
    assert shop.asked == [
        ("transient", "order", "reset"),
        ("transient", "order", "timeout"),
        ("transient", "order", "declined"),
    ]
    assert (verdict.status, verdict.run_dir) == ("correct", "/runs/reset")
    assert verdict.message == (
        "a reset and a timed-out reply were retried and each order was charged once; a"
        " declined card was tried once"
    )


def test_a_plans_parts_are_read_as_one_may_write_their_names(monkeypatch):
    """ "Policy" is the policy, as "New Key" is new_key in a prediction (it was refused as no
    dict of two parts, and nothing ran)."""
    shop = Shop(monkeypatch)
    verdict = lesson8.charge_once.check({"Policy": "transient", " KEY ": "order"})
    assert verdict.status == "correct", str(verdict)
    assert shop.asked == [
        ("transient", "order", "reset"),
        ("transient", "order", "timeout"),
        ("transient", "order", "declined"),
    ]


@pytest.mark.parametrize(
    ("plan", "status", "says"),
    [
        ("transient", "incorrect", 'give a dict with two parts: {"policy": ..., "key": ...}'),
        ({"policy": "none"}, "incorrect", 'give a dict with two parts: {"policy": ..., "key'),
        (
            {"policy": "none", "key": "order", "retry": 3},
            "incorrect",
            'give a dict with two parts: {"policy": ..., "key": ...}',
        ),
        (  # one part, written two ways
            {"policy": "none", "Policy": "transient", "key": "order"},
            "incorrect",
            'give a dict with two parts: {"policy": ..., "key": ...}',
        ),
        (
            {"policy": "???", "key": "order"},
            "incomplete",
            "still open: policy; nothing was run yet",
        ),
        ({"policy": "none", "key": None}, "incomplete", "still open: key; nothing was run yet"),
        (
            {"policy": "none", "key": "order_id"},
            "incorrect",
            "'order_id' is not a key; choose one of: uuid4, attempt, attempt_only, order",
        ),
        (
            {"policy": 3, "key": "order"},
            "incorrect",
            "3 is not a policy; choose one of: none, default, every, transient",
        ),
    ],
)
def test_a_plan_of_the_wrong_form_is_told_its_form_and_nothing_runs(
    monkeypatch, plan, status, says
):
    shop = Shop(monkeypatch)
    verdict = lesson8.charge_once.check(plan)
    assert (verdict.status, verdict.run_dir) == (status, None)
    assert verdict.message.startswith(says) and shop.asked == []
    if status == "incomplete":
        assert verdict.message == says


PLAN = {"policy": "transient", "key": "order"}
RESET = "when the charge went through, then the connection was reset (ConnectionResetError)"
TIMEOUT = "when the charge went through, then reading the reply timed out (TimeoutError)"


@pytest.mark.parametrize(
    ("failure", "orders", "says"),
    [
        (
            "timeout",
            [
                order("order-1", "duplicate", 2, 2, keys=["a", "b"]),
                order("order-2", "never_charged", receipt=3, charges=0, keys=["order-1:1"]),
            ],
            f"{TIMEOUT}: order-2 ended with receipt #3, which is another order's charge: its"
            " key 'order-1:1' was not its own",
        ),
        (
            "reset",
            [
                order("order-1", "charged_once"),
                order("order-2", "duplicate", 3, 2, keys=list("xyz")),
            ],
            f"{RESET}: order-2 was charged 2 times, under the keys x, y, z: the payment service"
            " cannot tell a retry from a new payment",
        ),
        (
            "reset",
            [order("order-1", "charged_run_failed", error="ConnectionResetError: gone")],
            f"{RESET}: order-1 was charged, and then the run failed (ConnectionResetError: gone)"
            " without a retry: the shop thinks the payment failed",
        ),
        (
            "declined",
            [
                order("order-1", "declined", 1, 0, receipt=None, error="CardDeclined: no"),
                order("order-2", "declined", 2, 0, receipt=None, error="CardDeclined: no"),
            ],
            "when the card is declined before any charge (CardDeclined, a plain Exception):"
            " the declined card of order-2 was tried 2 times; a decline is an answer, not a"
            " fault, and each retry is another decline notice",
        ),
    ],
)
def test_an_order_that_ended_wrong_is_named_with_what_its_run_showed(
    monkeypatch, failure, orders, says
):
    shop = Shop(monkeypatch, **{failure: orders})
    verdict = lesson8.charge_once.check(PLAN)
    assert (verdict.status, verdict.message) == ("incorrect", says)
    assert verdict.run_dir == f"/runs/{failure}"
    assert shop.asked[-1][2] == failure


def test_under_a_decline_only_the_attempts_count_and_a_declined_order_is_right(monkeypatch):
    """A declined card's order that was not charged is right whatever its word; on the other
    troubles an order that was declined or failed without a charge is no fault of the plan."""
    odd = [order("order-1", "never_charged", 1, 0, receipt=4), order("order-2", "duplicate")]
    others = [order("order-1", "declined", charges=0), order("order-2", "failed", charges=0)]
    Shop(monkeypatch, declined=odd, reset=others, timeout=others)
    assert lesson8.charge_once.check(PLAN).status == "correct"


def test_a_run_that_failed_by_itself_gives_no_verdict_and_runs_no_more(monkeypatch):
    shop = Shop(monkeypatch)
    shop.failures["timeout"] = "charges worker timed out"
    verdict = lesson8.charge_once.check(PLAN)
    assert len(shop.asked) == 2
    assert (verdict.status, verdict.run_dir) == ("no verdict", "/runs/timeout")
    assert verdict.message == (
        "the run with timeout failed (charges worker timed out), so it says nothing about your"
        " answer: check again"
    )


# --- drain_safe ---------------------------------------------------------------------------


def drain(ended: str = "exited", first_exit: int = 0, **more: object) -> dict:
    """run_drain's result, shaped as its own: a drain after b by default."""
    worker = {
        "role": "first",
        "pid": 1,
        "exit_code": first_exit,
        "killed_at": None,
        "timed_out": more.pop("timed_out", False),
        "seconds": 1.0,
        "stdout": "",
        "stderr": more.pop("stderr", ""),
        "left": [],
    }
    return {
        "ended": ended,
        "first_exit": first_exit,
        "ran": more.pop("ran", {"first": ["a", "b"], "resume": ["c", "d"]}),
        "rerun_nodes": more.pop("rerun_nodes", []),
        "first_worker": worker,
        "failure": more.pop("failure", None),
        "run_dir": more.pop("run_dir", "/runs/term"),
    }


FAILED_ITSELF = drain(
    "exited 1", 1, stderr="Traceback ...\nNodeFailed: a", ran={"first": ["a"], "resume": []}
)


class Orchestrator:
    """run_drain's stand-in: the SIGTERM run, then the run where node a fails by itself."""

    def __init__(self, monkeypatch, term: dict, fails: dict = FAILED_ITSELF) -> None:
        self.runs, self.asked = {False: term, True: {**fails, "run_dir": "/runs/fails"}}, []
        monkeypatch.setattr(lesson8, "run_drain", self.run)

    def run(self, signal: str, **options: object) -> dict:
        self.asked.append((signal, options))
        return self.runs[options.get("fails", False)]


def test_a_drain_safe_serve_is_stopped_once_and_its_own_failure_reaches_the_orchestrator(
    monkeypatch,
):
    orchestrator = Orchestrator(monkeypatch, drain())
    verdict = lesson8.drain_safe.check(SERVE)
    options = {"grace": 0.8, "work_ms": 300, "serve_source": SERVE}
    assert orchestrator.asked == [
        ("term", options),
        ("term", {**options, "fails": True}),
    ]
    assert (verdict.status, verdict.run_dir) == ("correct", "/runs/term")
    assert verdict.message == (
        "SIGTERM drained the run after b, the worker exited 0 within the grace period, and the"
        " fresh process ran c and d: every node once; and when node a failed by itself, the"
        " failure reached the orchestrator"
    )


RAN = "the first process ran a b, the resumed one b c d"


@pytest.mark.parametrize(
    ("term", "says"),
    [
        (
            drain("terminated_by_sigterm", -15, rerun_nodes=["b"]),
            f"SIGTERM ended the worker at once, inside b: {RAN}; b ran twice",
        ),
        (
            drain("killed_after_grace", -9, rerun_nodes=["a", "b"]),
            "the worker still ran when the grace period (0.8 s) was over, and was SIGKILLed:"
            f" {RAN}; a and b ran twice",
        ),
        (
            drain("killed_after_grace", -9),  # every node once: serve itself ran on
            "the run drained and b was saved, but your serve still ran when the grace period"
            " (0.8 s) was over, and the worker was SIGKILLed: the first process ran a b, the"
            " resumed one c d; a failed run to its orchestrator. Return once the run has drained",
        ),
        (
            drain("no_stop", ran={"first": [], "resume": ["a"]}),
            "the first process ended before b started, with nothing asked of it: the first"
            " process ran nothing, the resumed one a",
        ),
        (
            drain(rerun_nodes=["b"]),
            f"the worker exited before b's result was saved: {RAN}; b ran twice",
        ),
        (
            drain("exited 3", 3, stderr="SystemExit: 3"),
            f"the first process ended with status 3: {RAN}",
        ),
    ],
)
def test_a_stop_that_was_not_a_drain_says_how_the_worker_ended_and_what_ran(
    monkeypatch, term, says
):
    if "twice" in says or "status" in says:
        term["ran"] = {"first": ["a", "b"], "resume": ["b", "c", "d"]}
    orchestrator = Orchestrator(monkeypatch, term)
    verdict = lesson8.drain_safe.check(SERVE)
    assert (verdict.status, verdict.message, verdict.run_dir) == ("incorrect", says, "/runs/term")
    assert len(orchestrator.asked) == 1  # the failure's run only after a right drain


def test_graph_drained_escaping_serve_is_a_failed_run_to_the_orchestrator(monkeypatch):
    stderr = "Traceback (most recent call last):\nlanggraph.errors.GraphDrained: drained\n"
    Orchestrator(monkeypatch, drain("exited 1", 1, stderr=stderr))
    verdict = lesson8.drain_safe.check(SERVE)
    assert (verdict.status, verdict.run_dir) == ("incorrect", "/runs/term")
    assert verdict.message == (
        "the run drained and b was saved, but GraphDrained escaped serve: the worker exited with"
        " status 1, a failed run to its orchestrator"
    )


def test_a_serves_own_error_is_shown_at_its_line(monkeypatch):
    stderr = (
        'Traceback (most recent call last):\n  File "<your serve>", line 2, in serve\n'
        "TypeError: invoke() got an unexpected keyword argument 'x'\n"
    )
    Orchestrator(monkeypatch, drain("exited 1", 1, stderr=stderr))
    verdict = lesson8.drain_safe.check(SERVE)
    assert (verdict.status, verdict.run_dir) == ("error", "/runs/term")
    assert verdict.message == (
        "your code raised TypeError: invoke() got an unexpected keyword argument 'x', at line"
        " 2: return graph.invoke(inputs, config, x=1)\nMend it and check again."
    )


@pytest.mark.parametrize("status", [-9, -15])
def test_a_worker_stopped_by_a_signal_is_not_the_readers_error(monkeypatch, status):
    ended = "killed_after_grace" if status == -9 else "terminated_by_sigterm"
    Orchestrator(monkeypatch, drain(ended, status, stderr="", rerun_nodes=["b"]))
    assert lesson8.drain_safe.check(SERVE).status == "incorrect"


def test_a_serve_that_ends_by_sys_exit_is_judged_by_how_the_stop_went(monkeypatch):
    Orchestrator(monkeypatch, drain("exited 2", 2, stderr="Traceback\nSystemExit: 2"))
    verdict = lesson8.drain_safe.check(SERVE)
    assert verdict.status == "incorrect"
    assert verdict.message.startswith("the first process ended with status 2: the first")


def test_a_drain_run_that_failed_by_itself_gives_no_verdict(monkeypatch):
    Orchestrator(monkeypatch, drain(failure="resume worker timed out"))
    verdict = lesson8.drain_safe.check(SERVE)
    assert (verdict.status, verdict.run_dir) == ("no verdict", "/runs/term")
    assert verdict.message == (
        "the run with SIGTERM failed (resume worker timed out), so it says nothing about your"
        " answer: check again"
    )


def test_a_serve_that_hides_node_as_own_failure_is_incorrect(monkeypatch):
    hidden = drain("exited", 0, ran={"first": ["a"], "resume": []})
    orchestrator = Orchestrator(monkeypatch, drain(), hidden)
    verdict = lesson8.drain_safe.check(SERVE)
    assert len(orchestrator.asked) == 2
    assert (verdict.status, verdict.run_dir) == ("incorrect", "/runs/fails")
    assert verdict.message == (
        "node a failed by itself (NodeFailed) before any stop was asked, and your serve"
        " ended without an error (it returned, or called sys.exit(0)): the worker exited 0,"
        " so its orchestrator takes a failed run for one that finished or drained. Catch"
        " GraphDrained alone, and let every other error out"
    )


def test_the_failures_run_failing_by_itself_or_timing_out_gives_no_right_verdict(monkeypatch):
    failed = {**FAILED_ITSELF, "failure": "resume worker exited 1: boom"}
    Orchestrator(monkeypatch, drain(), failed)
    verdict = lesson8.drain_safe.check(SERVE)
    assert (verdict.status, verdict.run_dir) == ("no verdict", "/runs/fails")
    assert verdict.message == (
        "the run where node a failed by itself failed (resume worker exited 1: boom), so it"
        " says nothing about your answer: check again"
    )
    endless = drain("exited", None, timed_out=True, ran={"first": ["a"], "resume": []})
    Orchestrator(monkeypatch, drain(), endless)
    verdict = lesson8.drain_safe.check(SERVE)
    assert (verdict.status, verdict.run_dir) == ("error", "/runs/fails")
    assert verdict.message == (
        "the first worker did not finish in time (an endless loop?)\nMend it and check again."
    )


def test_the_hints_name_the_grace_period_and_the_nodes_work():
    first = lesson8.drain_safe.hint(1)
    assert "waits 0.8 s, then SIGKILLs; each node works 0.3 s." in str(first)


def test_the_labs_own_line_failing_after_serve_says_what_the_lab_expects(monkeypatch):
    stderr = (
        'Traceback (most recent call last):\n  File "drain.py", line 40, in first_process\n'
        "KeyError: 'ran'\n"
    )
    Orchestrator(monkeypatch, drain("exited 1", 1, stderr=stderr))
    verdict = lesson8.drain_safe.check(SERVE)
    assert (verdict.status, verdict.run_dir) == ("incorrect", "/runs/term")
    assert verdict.message == (
        "the lab only runs serve in the worker: it may return anything, or raise (the lab's own"
        " code failed after yours returned: KeyError: 'ran')"
    )


@pytest.mark.parametrize("frame", ['File "<your serve>", line 2, in serve', 'File "x.py", line 9'])
def test_a_serve_that_printed_an_error_and_never_ended_is_told_it_timed_out(monkeypatch, frame):
    """Whichever lines its traceback went through: the verdict is the timeout (a traceback
    without a frame of serve's was read as the lab's own line failing after serve returned,
    though serve never returned)."""
    stderr = f"Traceback (most recent call last):\n  {frame}\nNodeFailed: a\n"
    endless = drain("exited", None, timed_out=True, stderr=stderr)
    Orchestrator(monkeypatch, drain(), endless)
    verdict = lesson8.drain_safe.check(SERVE)
    assert (verdict.status, verdict.run_dir) == ("error", "/runs/fails")
    assert verdict.message == (
        "the first worker did not finish in time (an endless loop?)\nMend it and check again."
    )
