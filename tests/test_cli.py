"""The CLI prints the same figures as the API, as text or JSON."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from argparse import Namespace

import pytest

from labkit.bench.trace import read_trace
from labkit.cli import main


def labkit(*args):
    done = subprocess.run(
        [sys.executable, "-m", "labkit", *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def test_run_json_has_the_documented_keys(tmp_path):
    out = json.loads(
        labkit(
            "run", "effect_first", "--kill-at", "effect", "--json", "--out", str(tmp_path / "run")
        )
    )
    assert out == {
        "order": "effect_first",
        "kill_at": "effect",
        "kill_mode": "exit",
        "before": {"done": 0, "receipts": 1},
        "after": {"done": 1, "receipts": 2},
        "first_exit": 91,
        "replay_exit": 0,
        "outcome": "duplicate",
        "failure": None,
        "timed_out": [],
        "run_dir": str(tmp_path / "run"),
    }


def test_kill_at_none_runs_without_a_crash(tmp_path):
    out = json.loads(
        labkit(
            "run",
            "checkpoint_first",
            "--kill-at",
            "none",
            "--kill-mode",
            "sigkill",
            "--json",
            "--out",
            str(tmp_path / "r"),
        )
    )
    assert (out["first_exit"], out["outcome"]) == (0, "consistent")


def test_sweep_json_lists_every_kill_point(tmp_path):
    rows = json.loads(labkit("sweep", "--json", "--out", str(tmp_path / "s")))
    assert len(rows) == 12
    assert {r["outcome"] for r in rows} == {"consistent", "duplicate", "lost"}


def test_text_views(tmp_path):
    assert "in_transaction" in labkit("orders")
    text = labkit(
        "run", "checkpoint_first", "--kill-at", "checkpoint", "--out", str(tmp_path / "run")
    )
    assert "LOST" in text and "(no rows)" in text
    shown = labkit("show", str(tmp_path / "run"))
    assert "control.db · progress" in shown and "effect.db · receipts" in shown


def test_step_pauses_at_each_point_and_kills_on_k(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "labkit", "step", "effect_first", "--out", str(tmp_path / "run")],
        input="\nk\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "paused at 'start'" in done.stdout and "paused at 'effect'" in done.stdout
    assert "SIGKILL the worker at 'effect'" in done.stdout
    assert "first worker exit: -9" in done.stdout and "DUPLICATE" in done.stdout


def step(tmp_path, capsys, keys):
    """`labkit step effect_first` answered with `keys`, one per prompt; what it printed."""
    from labkit.cli.commit_window import cmd_step

    pressed = iter(keys)
    cmd_step(
        Namespace(order="effect_first", out=str(tmp_path / "run")), answer=lambda _: next(pressed)
    )
    return capsys.readouterr().out


def test_step_names_the_order_and_its_keys_and_marks_what_recovery_added(
    tmp_path, capsys, no_leftover_workers
):
    out = step(tmp_path, capsys, ["\n", "k"])
    head = out.splitlines()[:3]
    assert head[0] == "effect_first: commit the receipt in effect.db, then done=1 in control.db"
    assert head[1] == "kill points: start → effect → checkpoint"
    assert head[2].startswith("keys: Enter or c: continue · k: kill -9 the worker here · q: quit")
    assert "SIGKILL the worker at 'effect'" in out and "first worker exit: -9" in out
    after = out.split("The files after recovery:")[1]
    assert "1   1     ← changed by recovery" in after  # done=1, as the notebook marks it
    receipts = after.split("effect.db · receipts")[1].splitlines()
    assert receipts[3].startswith("1 ") and "←" not in receipts[3]  # the first worker's
    assert receipts[4].startswith("2 ") and receipts[4].endswith("← added by recovery")


def test_step_without_a_kill_says_no_kill_and_asks_again_on_a_stray_key(
    tmp_path, capsys, no_leftover_workers
):
    out = step(tmp_path, capsys, ["x", "c", "", "c"])
    assert "'x' is not one of the keys" in out
    assert out.count("=== paused at 'start'") == 2  # the stray key did not move the worker
    assert "effect_first, no kill\n" in out and "killed at none" not in out
    assert "CONSISTENT" in out


def test_step_quit_kills_and_reaps_the_worker_and_recovers_nothing(
    tmp_path, capsys, no_leftover_workers
):
    out = step(tmp_path, capsys, ["", "q"])
    assert "Quit: the worker was killed and reaped" in out and "outcome" not in out
    trace = read_trace(tmp_path / "run")
    assert [e["point"] for e in trace if e["event"] == "kill"] == ["effect"]
    assert not any(e["role"] == "recovery" for e in trace)


KEY_READER = """
import fcntl, sys, termios
from labkit.keypress import read_key
fcntl.ioctl(0, termios.TIOCSCTTY, 0)  # the pty becomes this process's terminal: Ctrl-C works
before = termios.tcgetattr(0)
try:
    got = repr(read_key("> "))
except KeyboardInterrupt:
    got = "KeyboardInterrupt"
print("RESULT", got, "restored" if termios.tcgetattr(0) == before else "NOT restored")
"""


@pytest.mark.parametrize(
    ("typed", "result"), [(b"k", "'k'"), (b"\r", "'\\n'"), (b"\x03", "KeyboardInterrupt")]
)
def test_one_key_is_read_in_a_terminal_without_enter(typed, result):
    """In a real pseudo-terminal: the key is read alone, and the terminal's mode comes back."""
    terminal, child_side = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-c", KEY_READER],
        stdin=child_side,
        stdout=child_side,
        stderr=child_side,
        start_new_session=True,
    )
    os.close(child_side)
    try:
        assert read_until(terminal, b"> ").endswith(b"> ")  # cbreak is set before the prompt
        os.write(terminal, typed)  # no Enter after it
        assert f"RESULT {result} restored" in read_until(terminal, b"restored").decode()
    finally:
        child.kill()
        child.wait()
        os.close(terminal)


def read_until(fd, end: bytes, timeout: float = 20.0) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while end not in seen and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                seen += os.read(fd, 1024)
            except OSError:  # the child closed the terminal
                break
    return seen


def test_interrupt_prints_the_studys_table_and_the_tickets(capsys):
    assert main(["interrupt", "--cross-process", "--kill-at", "after_create"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("outcome: 3 TICKETS\n")
    table = out.split("\n\n")[1].splitlines()  # wrapped in its cells to fit 100 columns
    dashes = next(n for n, line in enumerate(table) if line.startswith("---"))
    spans = [m.span() for m in re.finditer("-+", table[dashes])]

    def cell(lines: list[str], column: int) -> str:
        start, end = spans[column]
        return " ".join(line[start:end].strip() for line in lines if line[start:end].strip())

    header, row = table[:dashes], table[dashes + 1 :]
    assert [cell(header, 0), cell(header, 1), cell(header, 5)] == [
        "key",
        "layout",
        "tickets before resume",
    ]
    assert [cell(row, n) for n in range(5)] == [
        "fresh",
        "combined",
        "new process",
        "after_create",
        "3",
    ]
    assert cell(row, len(spans) - 1) == "first: killed by SIGKILL → resume: exited 0"
    tickets = out.split("tickets.db · ticket\n")[1].split("\n\n")[0].splitlines()
    assert tickets[0].split() == ["id", "tenant", "op_key", "payload"]
    assert [row.split()[0] for row in tickets[2:]] == ["1", "2", "3"]
    assert "{" not in out.replace('{"title"', "")  # no dict printed raw


def test_the_mistyped_durability_pitfall_prints_its_timings_as_a_table(capsys):
    assert main(["pitfall", "mistyped_durability"]) == 0
    out = capsys.readouterr().out
    rows = out.split("outcome:\n\n")[1].split("\n\n")[0].splitlines()
    assert rows[0].split() == ["mode", "nodes", "run", "b", "waited", "ms"]
    assert [row.split()[:2] for row in rows[2:]] == [["sync", "4"], ["syncc", "4"], ["async", "4"]]
    waited = {row.split()[0]: float(row.split()[2]) for row in rows[2:]}
    assert waited["sync"] >= 90 > waited["syncc"]  # the typo does not wait for the checkpoint
    assert "[{" not in out


def test_the_notebook_shows_the_same_timings_as_a_table_too():
    from labkit.studies.durability.pitfalls import run_pitfall
    from labkit.views.durability import pitfall_html

    html = pitfall_html("mistyped_durability", run_pitfall("mistyped_durability"))
    assert "<th" in html and ">b waited ms</th>" in html and ">syncc</td>" in html
    assert "[{" not in html and "{&#x27;" not in html


def call_step(tmp_path, capsys, keys, fault="none"):
    """`labkit call --step --fault FAULT` answered with `keys`, one per prompt; what it printed."""
    from labkit.cli.unknown_outcome import cmd_call

    pressed = iter(keys)
    args = Namespace(
        strategy="reconcile", fault=fault, timeout=0.2, out=str(tmp_path / "run"), json=False
    )
    cmd_call(Namespace(**vars(args), step=True), answer=lambda _: next(pressed))
    return capsys.readouterr().out


def test_call_step_pauses_the_caller_at_each_point_and_kills_on_k(
    tmp_path, capsys, no_leftover_workers
):
    out = call_step(tmp_path, capsys, ["", "k"])
    assert out.splitlines()[1] == "the caller stops at: intent_saved → sent → answered"
    paused = [line.split("'")[1] for line in out.splitlines() if line.startswith("=== paused")]
    assert paused == ["intent_saved", "sent"]
    assert "caller.db · intent" in out and "service/tickets.db · ticket" in out
    assert "SIGKILL the caller at 'sent'" in out and "UNKNOWN-RESOLVED" in out
    trace = read_trace(tmp_path / "run")
    assert [e["point"] for e in trace if e["event"] == "kill"] == ["sent"]
    assert any(e["role"] == "recovery" for e in trace)


def test_call_step_quit_kills_and_reaps_the_caller_and_recovers_nothing(
    tmp_path, capsys, no_leftover_workers
):
    out = call_step(tmp_path, capsys, ["x", "q"], fault="reply_lost")
    assert "'x' is not one of the keys" in out and out.count("=== paused at 'intent_saved'") == 2
    assert "Quit: the caller was killed and reaped" in out and "outcome" not in out
    assert not any(e["role"] == "recovery" for e in read_trace(tmp_path / "run"))


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--step", "--json"], "--step shows both sides as it goes"),
        (["--step", "--timeout", "1"], "--step waits the caller's usual 0.2 s"),
        (["--step", "--strategy", "hope"], "unknown strategy 'hope'"),
    ],
)
def test_call_step_bad_input_is_status_2_and_one_line(tmp_path, args, says):
    done = subprocess.run(
        [sys.executable, "-m", "labkit", "call", *args, "--out", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and says in done.stderr
    assert not (tmp_path / "run").exists()


def test_a_ctrl_c_python_turned_into_a_runtime_error_is_one_line_and_status_130(
    monkeypatch, capsys
):
    def pressed_in_a_class_body(args):  # as a lazy import's __set_name__ reports a Ctrl-C
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as ctrl_c:
            raise RuntimeError("Error calling __set_name__ on 'cached_property'") from ctrl_c

    monkeypatch.setattr("labkit.cli.commit_window.cmd_orders", pressed_in_a_class_body)
    assert main(["orders"]) == 130
    assert capsys.readouterr().err == "labkit: interrupted; every worker was killed and reaped\n"


def test_a_runtime_error_of_its_own_is_not_taken_for_a_ctrl_c(monkeypatch):
    def fails(args):
        raise RuntimeError("a bug")

    monkeypatch.setattr("labkit.cli.commit_window.cmd_orders", fails)
    with pytest.raises(RuntimeError, match="a bug"):
        main(["orders"])
