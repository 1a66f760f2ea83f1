"""The crash explorer (lesson 9) finds exactly the windows the lessons teach, and no others.

Pointed at the lab's own studies it must fail study 000's effect_first only between its two
commits (duplicate) and checkpoint_first only between its two (lost), atomic and idempotent
nowhere; study 001's fresh key (two tickets) and not the stable key; study 004's linear graph
under sync exactly inside each node (between its ledger lines and its saved writes), as
lesson 4 says. Each outcome is read back from the point's own run folder. Then: equal crash
states are explored once, a reader's module is read by its file alone, a checker that raises
or a Ctrl-C stops the exploration with what was explored and no process left, and bad input
is one line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import STDLIB, processes_mentioning, worker_imports

from labkit.bench.errors import LabError
from labkit.bench.snapshot import read_tables
from labkit.bench.trace import read_trace
from labkit.studies.explorer.replay import explore
from labkit.studies.explorer.services import ticket_service

STUDY_000 = "labkit.studies.commit_window.worker:"
LAB = "labkit.studies.explorer.lab:"


def failing(exploration) -> dict:
    return {p.n: p.outcome for p in exploration.failing}


def receipts(run_dir: str) -> int:
    return len(read_tables(Path(run_dir) / "effect.db")["receipts"].rows)


def write(folder: Path, name: str, code: str) -> None:
    (folder / name).write_text(textwrap.dedent(code))


def test_effect_first_fails_only_between_its_two_commits():
    found = explore(STUDY_000 + "effect_first")
    assert [(p.n, p.op, p.detail) for p in found.points] == [
        (None, "run", "to its end"),
        (1, "commit", "effect.db"),
        (2, "commit", "control.db"),
    ]
    assert failing(found) == {1: "duplicate"}
    assert receipts(found.point(1).run_dir) == 2  # the files say so, not only the checker
    assert receipts(found.point(2).run_dir) == 1
    assert found.point(1).where.startswith("worker.py:")


def test_checkpoint_first_fails_only_between_its_two_commits():
    found = explore(STUDY_000 + "checkpoint_first", kill_mode="exit")
    assert [p.detail for p in found.points[1:]] == ["control.db", "effect.db"]
    assert failing(found) == {1: "lost"}
    assert receipts(found.point(1).run_dir) == 0


@pytest.mark.parametrize(
    ("step", "one_file", "points"), [("atomic", True, 1), ("idempotent", False, 2)]
)
def test_atomic_and_idempotent_fail_nowhere(step, one_file, points):
    found = explore(STUDY_000 + step, one_file=one_file)
    assert found.crash_points == points
    assert found.green, found.summary()


def test_study_001_fresh_key_fails_and_the_stable_key_passes():
    fresh = explore(LAB + "fresh_key", "graph", LAB + "one_ticket")
    stable = explore(LAB + "stable_key", "graph", LAB + "one_ticket")
    assert fresh.point(None).outcome == "duplicate"  # two tickets without any crash
    assert set(failing(fresh).values()) == {"duplicate"}
    assert stable.green, stable.summary()
    assert any(p.op == "commit" and p.detail == "tickets.db" for p in stable.points)


def test_study_004_linear_sync_fails_inside_each_node_as_lesson_4_says():
    found = explore(LAB + "linear", "graph")
    ops = [(p.op, p.detail) for p in found.points[1:]]
    # a start and an end line, four nodes: each line's write (the ledger's os.write) is a
    # crash point, its fsync none (a kill after it leaves what the write left)
    assert ops.count(("write", "ledger.jsonl")) == 8 and ("fsync", "ledger.jsonl") not in ops
    lines = {p.n for p in found.points if p.op == "write"}
    assert lines <= {p.n for p in found.failing}, found.summary()  # every node's window
    assert set(failing(found).values()) == {"duplicate"}  # never lost: sync saved each step
    # A saver's point fails only when LangGraph's saving thread ran behind the next node (a
    # busy machine): that node had written its ledger line, its writes were not saved yet.
    assert all(p.op in ("put", "put_writes") for p in found.failing if p.n not in lines)
    assert all(p.same_as is None for p in found.points)  # a graph's every point is run
    assert all(
        p.where and p.where.startswith("graphs.py:") for p in found.points if p.op == "write"
    )


def test_study_004_linear_exit_mode_loses_the_run_until_its_only_save():
    found = explore(LAB + "linear", "graph", durability="exit")
    *inside, last = found.points[1:]
    assert [p.op for p in inside] == ["write"] * 8 and (last.op, last.outcome) == (
        "put",
        "consistent",
    )
    assert {p.outcome for p in inside} == {"lost"}
    assert all("EmptyInputError" in p.complaint for p in inside)


def test_equal_crash_states_are_explored_once_and_counted(tmp_path, monkeypatch):
    write(
        tmp_path,
        "twice.py",
        """
        from labkit.studies.commit_window.stores import KEY, PAYLOAD

        def step(control, effect, gate):
            with effect:
                effect.add_receipt_once(KEY, PAYLOAD)
            with effect:
                effect.db.execute("DELETE FROM receipts")
            with effect:
                effect.add_receipt_once(KEY, PAYLOAD)  # the files as after the first commit
            with control:
                control.mark_done()
        """,
    )
    monkeypatch.chdir(tmp_path)
    found = explore("twice:step", out=tmp_path / "x")
    assert [(p.n, p.detail, p.where) for p in found.points[1:]] == [
        (1, "effect.db", "twice.py:5"),  # a commit's line: its `with` block's
        (2, "effect.db", "twice.py:7"),
        (3, "effect.db", "twice.py:9"),
        (4, "control.db", "twice.py:11"),
    ]
    assert (found.crash_points, found.crash_states) == (4, 3)
    assert found.point(3).same_as == 1 and found.point(3).run_dir.endswith("point-001")
    assert not (tmp_path / "x" / "point-003").exists()
    assert found.green


@pytest.mark.parametrize("threads", [False, True])
def test_a_step_is_killed_in_a_fork_of_its_recording_unless_a_thread_runs_beside_it(
    tmp_path, threads
):
    """The recording forks the process it kills at a point only when it has no other thread
    (another could write while the files are copied); else a worker runs to the point and
    dies there. Either way the same window is found, in the files of the point's folder."""
    helper = "threading.Thread(target=time.sleep, args=(0.5,), daemon=True).start()"
    write(
        tmp_path,
        "steps.py",
        f"""
        import threading, time

        def step(control, effect, gate):
            {helper if threads else "pass"}
            with effect:
                effect.add_receipt("job-1", "report")
            with control:
                control.mark_done()
        """,
    )
    found = explore(f"{tmp_path}/steps.py:step", out=tmp_path / "x")
    assert failing(found) == {1: "duplicate"} and receipts(found.point(1).run_dir) == 2
    [kill] = [e for e in read_trace(found.point(1).run_dir) if e["event"] == "kill"]
    assert kill["role"] == "first" and kill["mode"] == "sigkill"
    ran_again = (Path(found.point(1).run_dir) / "first.stdout").exists()  # a worker of its own
    assert ran_again == threads


@pytest.mark.parametrize(
    "key",
    ["os.getppid()", "os.getpid()", "os.environ.get('LABKIT_ATTEMPT')", "time.time() // 3600"],
)
def test_a_key_of_the_process_or_the_hour_is_caught_as_after_a_real_restart(tmp_path, key):
    """The recording forks the process it kills; the recovery still runs as after a restart:
    another pid and parent than the code that ran saw, the next attempt, a day later."""
    write(
        tmp_path,
        "keyed.py",
        f"""
        import os, time

        def step(control, effect, gate):
            with effect:
                effect.add_receipt_once(f"report:{{{key}}}", "report")
            with control:
                control.mark_done()
        """,
    )
    found = explore(f"{tmp_path}/keyed.py:step", out=tmp_path / "x")
    assert failing(found) == {1: "duplicate"}, found.summary()
    assert receipts(found.point(1).run_dir) == 2


@pytest.mark.parametrize(
    ("claim", "name"),
    [
        ("claim_conditional(db, 'worker-1', 0, 0, print)", "claim_conditional"),
        ("leases.CLAIMS['lease'](db, 'worker-1', 0, 200, print)", "claim_lease"),
    ],
)
def test_a_claim_through_lesson_6_is_a_crash_point_at_the_readers_line(tmp_path, claim, name):
    """Killed right after its claim commits, the winner holds the task: the recovery cannot
    claim it again (no lease has expired on the lab's clock), and the report is never written."""
    write(
        tmp_path,
        "claims.py",
        f"""
        import os

        from labkit.studies.leases import stores as leases
        from labkit.studies.leases.stores import claim_conditional

        def step(control, effect, gate):
            if not os.path.exists(leases.TASKS_FILE):
                leases.create_files(".")
            db = leases.connect(".", leases.TASKS_FILE)
            token = {claim}
            if token is not None:
                with effect:
                    effect.add_receipt(f"job-17:{{token}}", "report")
            with control:
                control.mark_done()
        """,
    )
    found = explore(f"{tmp_path}/claims.py:step", out=tmp_path / "x")
    [claimed] = [p for p in found.points if p.op == "claim"]
    assert (claimed.detail, claimed.where) == (f"{name} (tasks.db)", "claims.py:11")
    assert claimed.outcome == "lost" and receipts(claimed.run_dir) == 0
    [task] = read_tables(Path(claimed.run_dir) / "tasks.db")["task"].rows
    assert tuple(task)[1:4] == ("claimed", "worker-1", 33), task
    after = [p for p in found.points if p.n is not None and p.n > claimed.n]
    assert [p.op for p in after] == ["commit", "commit"] and all(
        p.outcome == "consistent" for p in after
    )


@pytest.mark.parametrize(("key", "failing_at"), [("uuid.uuid4().hex", "reply"), ("'o-17'", None)])
def test_a_call_to_lesson_5s_service_is_crashed_before_sending_and_after_the_reply(
    tmp_path, key, failing_at
):
    """Killed after the reply, a retry under a new key makes a second ticket in the service's
    file; under the operation's own key the service returns the original: green."""
    write(
        tmp_path,
        "calls.py",
        f"""
        import uuid

        from labkit.studies.explorer.services import ticket_service

        def step(control, effect, gate):
            tickets = ticket_service()
            tickets.create({key}, "refund order 17")
            with control:
                control.mark_done()
        """,
    )
    found = explore(f"{tmp_path}/calls.py:step", out=tmp_path / "x")
    [call] = [p for p in found.points if p.op == "call"]
    [reply] = [p for p in found.points if p.op == "reply"]
    assert call.n < reply.n and call.detail.endswith(": before sending")
    assert call.where == reply.where == "calls.py:8"
    assert call.outcome == "consistent"
    assert {p.op for p in found.failing} == ({failing_at, "write"} if failing_at else set())
    if failing_at:
        assert reply.outcome == "duplicate"
        assert len(read_tables(Path(reply.run_dir) / "tickets.db")["ticket"].rows) == 2
    else:
        assert found.green, found.summary()
    assert processes_mentioning(str(tmp_path)) == []  # every service ended with its worker


def test_the_readers_folder_is_read_for_the_named_module_only(tmp_path):
    write(tmp_path, "json.py", "open('json-was-imported', 'w').close()\n")
    write(
        tmp_path,
        "my_step.py",
        """
        def step(control, effect, gate):
            with effect:
                effect.add_receipt("job-1", "report")
            with control:
                control.mark_done()
        """,
    )
    done = labkit(tmp_path, "explore", "my_step:step", "--json", "--out", str(tmp_path / "x"))
    assert done.returncode == 1, done.stderr  # effect-first: a failing matrix
    result = json.loads(done.stdout)
    assert [p["outcome"] for p in result["points"]] == ["consistent", "duplicate", "consistent"]
    assert [p["where"] for p in result["points"][1:]] == ["my_step.py:3", "my_step.py:5"]
    assert not list(tmp_path.rglob("json-was-imported"))
    assert not (tmp_path / "__pycache__").exists()  # nothing of ours beside the module


def test_a_checker_that_raises_stops_with_what_was_explored(tmp_path, monkeypatch):
    write(
        tmp_path,
        "checks.py",
        """
        def picky(state):
            if state.point is not None and state.point["n"] == 2:
                raise RuntimeError("picky checker")
            return None
        """,
    )
    monkeypatch.chdir(tmp_path)
    found = explore(STUDY_000 + "effect_first", checker="checks:picky", out=tmp_path / "x")
    assert found.stopped.startswith("the checker raised RuntimeError: picky checker")
    assert found.point(2).outcome == "failed"
    others = [p.outcome for p in found.points if p.n != 2]  # those explored before it raised
    assert others and set(others) == {"consistent"}  # this checker sees no harm in duplicates
    assert not found.green
    assert processes_mentioning(str(tmp_path)) == []


def test_ctrl_c_reports_what_was_explored_and_leaves_no_process(tmp_path):
    commits = "\n".join(
        f"    with effect:\n        effect.add_receipt('k{i}', 'p')\n    time.sleep(0.2)"
        for i in range(12)
    )
    write(tmp_path, "slow.py", f"import time\n\ndef step(control, effect, gate):\n{commits}\n")
    out = tmp_path / "x"
    cli = subprocess.Popen(
        [sys.executable, "-m", "labkit", "explore", "slow:step", "--out", str(out)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    explored = out / "explored.jsonl"
    deadline = time.monotonic() + 60
    while len(explored.read_text().splitlines() if explored.exists() else []) < 3:
        assert time.monotonic() < deadline and cli.poll() is None, cli.communicate()
        time.sleep(0.05)
    cli.send_signal(signal.SIGINT)
    stdout, stderr = cli.communicate(timeout=60)
    assert cli.returncode == 130, stderr
    assert "stopped: interrupted (Ctrl-C) after" in stdout
    assert "no crash" in stdout and "\n1 " in stdout
    assert json.loads((out / "results.json").read_text())["stopped"].startswith("interrupted")
    assert processes_mentioning(str(tmp_path)) == []


def labkit(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """The CLI, in `folder`, as a reader runs it (Python free to write bytecode files)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return subprocess.run(
        [sys.executable, "-m", "labkit", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["nope"], "must be 'module:callable'"),
        (["a:b", "--kind", "graf"], "unknown kind 'graf'; choose one of: step, graph"),
        (["a:b", "--kill-mode", "soft"], "choose one of: sigkill, exit"),
        (["a:b", "--durability", "syncc"], "choose one of: sync, async, exit"),
        (["no_such_module:step"], "no module 'no_such_module'"),
        (["a.py:step"], "there is no file"),
        (["a:b", "--kind", "graph", "--postgres", "http://u:pw@x"], "or a URL that starts with"),
        (["a:b", "--postgres", "lab"], "postgres is for a graph or a callable"),
    ],
)
def test_bad_input_is_one_line_and_status_2(tmp_path, args, says):
    done = labkit(tmp_path, "explore", *args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
    assert done.stdout == "" and "pw" not in done.stderr  # a password is never repeated


def test_a_steps_workers_and_the_kernels_side_import_only_the_standard_library():
    step_worker = ("labkit.studies.explorer.worker", "labkit.studies.explorer.steps")
    assert worker_imports(*step_worker) - {"labkit"} <= STDLIB
    # a fresh worker (a new interpreter: the "hash" restart) starts without the launcher's
    assert "subprocess" not in worker_imports(*step_worker)
    kernel = ("labkit.studies.explorer.replay", "labkit.studies.explorer.report")
    assert "langgraph" not in worker_imports(*kernel)


def test_bad_input_in_the_api_is_a_lab_error():
    with pytest.raises(LabError, match="choose one of: step, graph"):
        explore(STUDY_000 + "effect_first", kind="steps")
    with pytest.raises(LabError, match="one_file must be True or False"):
        explore(STUDY_000 + "atomic", one_file="yes")
    with pytest.raises(LabError, match="runs in a step the crash explorer runs"):
        ticket_service()  # lesson 5's service, outside the explorer's workers


EMAIL_GRAPH = """
import sqlite3
from typing import TypedDict
from langgraph.graph import START, StateGraph

class State(TypedDict):
    order: str

def send_email(state: State) -> dict:
    db = sqlite3.connect("emails.db", isolation_level=None)  # relative: the run's folder
    db.execute("CREATE TABLE IF NOT EXISTS email(order_id TEXT {key})")
    db.execute("INSERT {ignore} INTO email VALUES(?)", (state["order"],))
    return {{"order": state["order"]}}

graph = StateGraph(State).add_node(send_email).add_edge(START, "send_email")
INPUT = {{"order": "order-42"}}
"""


def test_a_readers_graph_sends_twice_between_its_commit_and_put_writes_then_is_fixed(tmp_path):
    write(tmp_path, "mails.py", EMAIL_GRAPH.format(key="", ignore=""))
    found = explore(f"{tmp_path}/mails.py:graph", kind="graph")
    [sent] = [p for p in found.points if p.op == "commit" and p.where == "mails.py:12"]
    assert failing(found) == {sent.n: "duplicate"}, found.summary()
    assert len(read_tables(Path(sent.run_dir) / "emails.db")["email"].rows) == 2
    assert not list(tmp_path.glob("*.db"))  # in the run's folder, never beside the module
    write(tmp_path, "mails.py", EMAIL_GRAPH.format(key="PRIMARY KEY", ignore="OR IGNORE"))
    assert explore(f"{tmp_path}/mails.py:graph", kind="graph").green


def test_the_panel_shows_a_points_timeline_and_replays_it_in_step_mode():
    from labkit.views.explorer import ExplorerPanel

    found = explore(STUDY_000 + "effect_first")
    panel = ExplorerPanel(found)
    assert panel.pick.value == 1  # the failing point first
    panel.timeline_button.click()
    assert bytes(panel.image.value).startswith(b"\x89PNG") and not panel.error_line.value
    panel.step_button.click()
    assert "crash point 1" in panel.status.value and "effect.db" in panel.files.value
    panel.kill_button.click()
    panel.recover_button.click()
    assert "duplicate" in panel.status.value and not panel.error_line.value, panel.error_line.value
    assert panel.session.closed and panel.session.worker.proc.returncode is not None


CALLABLE = (
    EMAIL_GRAPH.replace("graph = StateGraph", "shape = StateGraph")
    + """
def run(checkpointer, resume):
    graph = shape.compile(checkpointer=checkpointer)
    config = {{"configurable": {{"thread_id": "order-42"}}}}
    graph.invoke(None if resume else INPUT, config, durability="sync")
"""
)


def test_a_callable_with_a_checkpointer_recovers_its_own_way(tmp_path):
    write(tmp_path, "flow.py", CALLABLE.format(key="", ignore=""))
    found = explore(f"{tmp_path}/flow.py:run", kind="callable")
    assert {p.op for p in found.points[1:]} == {"put", "put_writes", "commit"}
    [sent] = [p for p in found.points if p.where == "flow.py:12"]
    assert failing(found) == {sent.n: "duplicate"}, found.summary()
    write(tmp_path, "flow.py", CALLABLE.format(key="PRIMARY KEY", ignore="OR IGNORE"))
    assert explore(f"{tmp_path}/flow.py:run", kind="callable").green
