"""Lesson 5, the remote call: a real ticket service on 127.0.0.1 in its own process, a caller
killed or timed out, a fresh caller that recovers by its strategy. Every strategy under every
fault leaves the tickets, the checkpoint and the Jepsen history it should; every process is
reaped; bad input is one line; nothing is written outside the run folder."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from labkit.bench.errors import LabError
from labkit.studies.unknown_outcome.caller import SECRET_HEADER
from labkit.studies.unknown_outcome.experiment import (
    KEY,
    TITLE,
    CallLab,
    ServiceProcess,
    run_call,
    sweep_calls,
)
from labkit.studies.unknown_outcome.outcome import jepsen_ops
from labkit.studies.unknown_outcome.spec import FAULTS, STRATEGIES, CallSpec
from tests.conftest import STDLIB, ctrl_c_while_it_works, processes_mentioning, worker_imports

ROOT = Path(__file__).resolve().parent.parent

# strategy → (tickets, checkpoint status, Jepsen types, outcome) under every fault but "none"
EXPECTED = {
    "new_key": (2, "done", ["info", "ok"], "duplicate"),
    "same_key": (1, "done", ["info", "ok"], "unknown-resolved"),
    "reconcile": (1, "done", ["info", "ok"], "unknown-resolved"),
    "give_up": (1, "failed", ["info"], "orphan"),
}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    folder = tmp_path_factory.mktemp("calls") / "sweep"
    results = sweep_calls(out=folder)
    assert processes_mentioning(str(folder)) == []  # the service and every caller reaped
    return {(r.spec.strategy, r.spec.fault): r for r in results}


@pytest.mark.parametrize("strategy", list(STRATEGIES))
@pytest.mark.parametrize("fault", list(FAULTS))
def test_every_strategy_under_every_fault_leaves_what_it_should(sweep, strategy, fault):
    r = sweep[strategy, fault]
    assert r.failure is None, r.failure
    answered = (1, "done", ["ok"], "consistent")  # no fault: nothing to recover
    tickets, status, jepsen, outcome = answered if fault == "none" else EXPECTED[strategy]
    assert len(r.tickets) == tickets and r.status == status and r.outcome == outcome
    types = [op["type"] for op in r.ops]
    assert types[: len(jepsen) - 1] == jepsen[:-1] and types[-1] == jepsen[-1], r.ops
    assert all(row[1] == r.spec.label and row[2].startswith(KEY) for row in r.tickets)
    saved = json.loads((r.run_dir / "results.json").read_text())
    assert saved["tickets"] == tickets and saved["outcome"] == outcome
    if status == "done":  # the checkpoint holds a ticket the service really has
        assert r.checkpoint[0][3] in [row[0] for row in r.tickets]
    if fault != "none" and strategy == "same_key":  # the original response, not a new one
        assert r.ops[-1]["value"] == r.tickets[0][0] and r.tickets[0][2] == KEY


def test_the_service_restarts_only_after_a_fault_that_killed_it(sweep):
    killed = sweep["reconcile", "service_killed"]
    assert killed.service_restarted and killed.caller.exit_code == 0
    assert killed.ops[0]["type"] == "info" and "RemoteDisconnected" in killed.ops[0]["error"]
    events = [e for e in killed.events() if e["role"].startswith("service")]
    assert [e["event"] for e in events if e["event"] in ("commit", "kill")] == ["commit", "kill"]
    assert not sweep["reconcile", "reply_lost"].service_restarted
    caller_killed = sweep["same_key", "caller_killed"]
    assert caller_killed.caller.exit_code == 91 and caller_killed.caller.killed_at == "sent"
    assert caller_killed.ops[0]["error"] == "the process died before the answer"


def test_a_changed_payload_is_refused_and_a_repeat_gets_the_original(tmp_path):
    with ServiceProcess(tmp_path / "service") as service:

        def post(op_key: str, title: str) -> tuple[int, dict]:
            connection = http.client.HTTPConnection("127.0.0.1", service.port, timeout=10)
            body = json.dumps({"tenant": "t", "op_key": op_key, "title": title})
            connection.request("POST", "/tickets", body, {SECRET_HEADER: service.secret})
            response = connection.getresponse()
            answer = (response.status, json.loads(response.read()))
            connection.close()
            return answer

        assert post(KEY, TITLE) == (200, {"ticket": 1})
        assert post(KEY, TITLE) == (200, {"ticket": 1})
        status, answer = post(KEY, "another title")
        assert status == 409 and "already holds" in answer["refused"]
        assert post("other", TITLE) == (200, {"ticket": 2})
        assert [row[2] for row in service.tickets("t")] == [KEY, "other"]


def listening_addresses(port: int) -> list[str]:
    """The local addresses (hex, as /proc/net/tcp and tcp6 write them) listening on `port`."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if os.path.exists(table):
            for line in Path(table).read_text().splitlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                address, hex_port = local.split(":")
                if int(hex_port, 16) == port and state == "0A":  # 0A: LISTEN
                    found.append(address)
    return found


def test_the_service_binds_127_0_0_1_only_and_is_reaped(tmp_path):
    with ServiceProcess(tmp_path / "service") as service:
        pid = service.worker.proc.pid
        assert listening_addresses(service.port) == ["0100007F"]  # 127.0.0.1, nothing else
    assert not Path(f"/proc/{pid}").exists() and listening_addresses(service.port) == []


def test_every_process_is_reaped_after_a_run_and_after_a_killed_service(tmp_path):
    result = run_call("reconcile", "service_killed", out=tmp_path / "run")
    assert result.service_restarted and result.outcome == "unknown-resolved"
    assert processes_mentioning(str(tmp_path)) == []
    stopped = [e for e in result.events() if e["event"] == "kill"]
    assert [e["role"] for e in stopped] == ["service"]  # the fault's kill; the stop has no tenant


def test_ctrl_c_during_a_sweep_reaps_the_service_and_every_caller(tmp_path):
    code = (
        "import sys; from labkit.studies.unknown_outcome.experiment import sweep_calls\n"
        "try:\n    sweep_calls(out=sys.argv[1])\n"
        "except KeyboardInterrupt:\n    sys.exit(130)\n"
    )
    sweep_dir = tmp_path / "sweep"
    process = subprocess.Popen([sys.executable, "-c", code, str(sweep_dir)], cwd=ROOT)
    deadline = time.monotonic() + 30
    while not processes_mentioning("/caller.stdout", str(sweep_dir)):  # a caller runs
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.01)
    ctrl_c_while_it_works(process)
    assert process.wait(timeout=30) == 130
    assert processes_mentioning(str(sweep_dir)) == []


def test_bad_input_is_one_line_naming_the_choices(tmp_path):
    with pytest.raises(LabError, match="unknown strategy 'retry'; choose one of: new_key, same"):
        run_call("retry")
    with pytest.raises(LabError, match="unknown fault 'slow'; choose one of: none, caller_k"):
        CallSpec("reconcile", "slow")
    with pytest.raises(LabError, match="timeout must be a number above 0"):
        run_call("reconcile", "none", timeout=-1)
    with pytest.raises(LabError, match="give a list of strategy names, from: new_key, same_key"):
        sweep_calls(strategies="new_key")
    with pytest.raises(LabError, match="strategy='custom' goes with recover_source"):
        CallSpec("custom")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--strategy", "retry"], "unknown strategy 'retry'; choose one of: new_key, same_key"),
        (["--fault", "slow"], "unknown fault 'slow'; choose one of: none, caller_killed"),
        (["--timeout", "-1"], "timeout must be a number above 0"),
        (["--timeout", "soon"], "a number of seconds, not 'soon'"),
    ],
)
def test_bad_input_on_the_command_line_is_status_2_and_one_line(args, says):
    done = subprocess.run(
        [sys.executable, "-m", "labkit", "call", *args], capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr


def test_the_command_line_prints_the_jepsen_column_beside_the_tickets(tmp_path):
    command = [sys.executable, "-m", "labkit", "call", "--strategy", "new_key"]
    done = subprocess.run(
        [*command, "--fault", "reply_lost", "--out", str(tmp_path / "run"), "--json"],
        capture_output=True,
        text=True,
    )
    summary = json.loads(done.stdout)
    assert summary["jepsen"] == ["info", "ok"] and summary["tickets"] == 2
    assert summary["outcome"] == "duplicate" and summary["status"] == "done"
    text = subprocess.run(
        [*command, "--fault", "none", "--out", str(tmp_path / "text")],
        capture_output=True,
        text=True,
    ).stdout
    assert "create ok: #1" in text and "outcome: CONSISTENT" in text


def test_nothing_is_written_outside_the_run_folder(tmp_path, monkeypatch):
    temp, cwd = tmp_path / "temp", tmp_path / "cwd"
    temp.mkdir()
    cwd.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.chdir(cwd)
    result = run_call("reconcile", "reply_lost", out=tmp_path / "run")
    assert list(temp.iterdir()) == [] and list(cwd.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "run", "temp"]
    assert (result.run_dir / "caller.db").exists()
    assert (
        result.service_dir / "tickets.db"
    ).exists() and result.service_dir.parent == result.run_dir


def test_an_invoke_without_its_answer_is_info():
    history = [
        {"process": "caller", "type": "invoke", "f": "create", "key": "k"},
        {"process": "recovery", "type": "invoke", "f": "read", "key": "k"},
        {"process": "recovery", "type": "ok", "f": "read", "key": "k", "value": 1},
    ]
    ops = jepsen_ops(history)
    assert [(op["process"], op["type"], op["value"]) for op in ops] == [
        ("caller", "info", None),
        ("recovery", "ok", 1),
    ]


def test_one_lab_serves_many_trials_with_one_service(tmp_path):
    with CallLab(tmp_path / "service") as lab:
        pid = lab.service.worker.proc.pid
        for n, strategy in enumerate(("same_key", "reconcile")):
            (tmp_path / str(n)).mkdir()
            result = lab.trial(CallSpec(strategy, "reply_lost"), tmp_path / str(n))
            assert result.outcome == "unknown-resolved"
        assert lab.service.worker.proc.pid == pid
    assert processes_mentioning(str(tmp_path)) == []


def test_step_mode_pauses_at_each_point_and_a_kill_there_is_recovered(tmp_path):
    from labkit.studies.unknown_outcome.stepping import CallStepSession

    with CallStepSession("reconcile", "none", out=tmp_path / "step") as session:
        assert session.paused_at == "intent_saved"
        assert session.state().table("intent").rows[0][2] == "unknown"
        assert session.proceed() == "sent"
        assert session.kill() == "sent"
        with pytest.raises(LabError, match="the caller was killed at 'sent'"):
            session.proceed()
        result = session.recover()
    assert result.outcome == "unknown-resolved" and result.ops[0]["type"] == "info"
    assert len(result.tickets) == 1 and result.status == "done"
    assert processes_mentioning(str(tmp_path)) == []


def test_the_views_show_the_jepsen_column_beside_the_service_rows(sweep):
    from labkit.views.unknown_outcome import call_html, call_sweep_html, timeline_figure

    result = sweep["new_key", "reply_lost"]
    html = call_html(result)
    assert "what the caller saw" in html and "what the service holds" in html
    assert html.count("job-17:open-ticket:v1:retry-") == 2  # the Jepsen op and the ticket
    matrix = call_sweep_html(list(sweep.values()))
    assert all(word in matrix for word in ("DUPLICATE", "ORPHAN", "UNKNOWN-RESOLVED"))
    assert "a ticket exists that the workflow believes failed" in matrix
    labels = [t.get_text() for t in timeline_figure(result).axes[0].texts]
    assert "create info" in labels and "holds the reply" in labels


def test_the_caller_and_the_service_import_only_the_standard_library_and_labkit():
    loaded = worker_imports(
        "labkit.studies.unknown_outcome.caller", "labkit.studies.unknown_outcome.service"
    )
    assert loaded - {"labkit"} <= STDLIB


def test_a_service_ends_when_its_parent_is_killed(tmp_path):
    """A kernel killed with a step session open (a failed cell, a restart) leaves no service."""
    code = (
        "import sys, time; from pathlib import Path\n"
        "from labkit.studies.unknown_outcome.experiment import ServiceProcess\n"
        "service = ServiceProcess(Path(sys.argv[1])).start()\n"
        "print(service.worker.proc.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path / "service")], stdout=subprocess.PIPE, cwd=ROOT
    )
    pid = int(parent.stdout.readline())
    parent.kill()  # SIGKILL: no finally, no atexit, nothing of the parent's runs
    parent.wait()
    parent.stdout.close()
    deadline = time.monotonic() + 10
    while processes_mentioning(str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert processes_mentioning(str(tmp_path)) == [], f"service {pid} outlived its parent"
