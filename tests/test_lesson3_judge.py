"""Lesson 3's judges say exactly what their real runs showed (issue 33: the mutants mutmut left
in workshop/lesson3.py): which check a key failed, with the keys and the processes that made
them; the real kill and resume a key is judged by, and a key that raises there (judged "correct"
once: the ticket its resume counted was the first run's); the candidate a gate let through or
held back, with what its real runs gave.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from wrong_answers import WRONG, gate, key

from labkit.bench.launcher import read_report
from labkit.bench.snapshot import read_tables
from labkit.bench.tickets import TICKETS_FILE
from labkit.workshop import lesson3
from labkit.workshop.checks import ReaderCodeError
from labkit.workshop.lesson3 import operation_key, predict_kills, release_gate

KEYS, GATES = WRONG["lesson3.operation_key"], WRONG["lesson3.release_gate"]
ONE = "request-42/create-ticket/v1"


def results(run_dir: str) -> dict:
    """What a run of the interrupt study was made with and left, from its results.json."""
    return json.loads((Path(run_dir) / "results.json").read_text())


def test_a_stable_key_under_any_name_is_correct_after_a_real_kill_and_resume():
    verdict = operation_key.check("def settle(state):\n    return state['operation_id'] + \"'s\"\n")
    assert (verdict.status, verdict.message) == (
        "correct",
        f'the same key "{ONE}\'s" after a restart, another for another request, and one ticket'
        " after a SIGKILL and a resume in a new process (receipts [1, 1, 1])",
    )
    ran = results(verdict.run_dir)
    assert {k: ran[k] for k in ("key", "layout", "cross_process", "kill_at", "approval")} == {
        "key": "custom",
        "layout": "combined",
        "cross_process": True,
        "kill_at": "after_create",
        "approval": True,
    }
    assert ran["key_source"] == (
        "def operation_key(state):\n    return state['operation_id'] + \"'s\"\n"
    )


def test_a_key_that_changes_within_one_process_shows_both_keys():
    verdict = operation_key.check(KEYS["random"][0])
    assert verdict.status == "incorrect"
    assert re.fullmatch(
        r"the same request got two keys in one process \('0\.\d+' and '0\.\d+'\): every resume"
        r" would create a new ticket",
        verdict.message,
    ), verdict.message
    assert Path(verdict.run_dir).name.startswith("key-probe-")
    counted = key(  # the same within the first worker; the restarted one counts its calls
        "import os\n"
        "calls = globals().setdefault('calls', [])\n"
        "calls.append(state)\n"
        "restarted = os.environ.get('LABKIT_ATTEMPT') == '2'\n"
        "return state['operation_id'] + (f':{len(calls)}' if restarted else '')"
    )
    verdict = operation_key.check(counted)
    assert verdict.message == (
        f"the same request got two keys in one process ('{ONE}:2' and '{ONE}:3'): every resume"
        " would create a new ticket"
    )


def changed_by_restart(run_dir: str, key: str, key_later: str) -> str:
    """The verdict on a key changed by a restart, from the two probes' own reports."""
    before, after = (read_report(Path(run_dir), role) for role in ("before", "after"))
    return (
        f"the same request got the key {key} before a restart and {key_later} after it (pid"
        f" {before['pid']} → {after['pid']}, parent {before['ppid']} → {after['ppid']},"
        f" host {before['host']} → {after['host']},"
        f" hash('probe') {before['hash']} → {after['hash']}, its clocks in another year, month,"
        " day, hour and minute, in another working folder, the requests in another order): the"
        " resumed node would create a second ticket"
    )


def test_a_key_that_a_restart_changes_is_told_each_processs_pid_parent_and_hash():
    verdict = operation_key.check(KEYS["the pid"][0])
    before, after = (read_report(Path(verdict.run_dir), r)["pid"] for r in ("before", "after"))
    assert before != after
    assert (verdict.status, verdict.message) == (
        "incorrect",
        changed_by_restart(verdict.run_dir, f"'{before}'", f"'{after}'"),
    )
    other_by_pid = key(  # the first request's key is stable; the other's is not
        "import os\n"
        "if state['operation_id'].startswith('request-42'):\n"
        "    return state['operation_id']\n"
        "return f\"{state['operation_id']}:{os.getpid()}\""
    )
    verdict = operation_key.check(other_by_pid)
    before, after = (read_report(Path(verdict.run_dir), r)["pid"] for r in ("before", "after"))
    other = "request-43/create-ticket/v1"
    assert verdict.message == changed_by_restart(
        verdict.run_dir, f"'{other}:{before}'", f"'{other}:{after}'"
    )


def test_a_key_of_the_host_is_refused_by_a_retry_as_on_another_machine():
    verdict = operation_key.check(KEYS["the host's name"][0])
    before, after = (read_report(Path(verdict.run_dir), r)["host"] for r in ("before", "after"))
    assert after == f"{before}-retry"  # restart.move_host
    assert (verdict.status, verdict.message) == (
        "incorrect",
        changed_by_restart(verdict.run_dir, f"'{ONE}:{before}'", f"'{ONE}:{after}'"),
    )


def test_a_key_that_holds_the_title_is_refused_by_the_same_operation_retitled():
    verdict = operation_key.check(key("return f\"{state['operation_id']}/{state['title']}\""))
    assert (verdict.status, verdict.message) == (
        "incorrect",
        f"the same operation (request-42) with another title got another key ('{ONE}/Printer"
        f" offline' and '{ONE}/Printer on fire'): a title changed before a retry would create a"
        " second ticket, where the service should refuse the change. The key names the"
        " operation, not what it asks for",
    )
    assert Path(verdict.run_dir).name.startswith("key-probe-")


def test_a_key_kept_in_a_file_is_not_found_by_the_restarted_worker_elsewhere():
    kept = KEYS["a uuid kept in a file beside the run"][0]
    verdict = operation_key.check(kept)
    assert verdict.status == "incorrect" and "in another working folder" in verdict.message
    elsewhere = Path(verdict.run_dir, "after-elsewhere")
    assert (Path(verdict.run_dir, "keys.json").is_file(), (elsewhere / "keys.json").is_file()) == (
        True,
        True,
    )


def test_one_key_for_two_requests_and_a_key_that_is_no_string_are_refused():
    verdict = operation_key.check(KEYS["the thread_id"][0])
    assert (verdict.status, verdict.message) == (
        "incorrect",
        "two different requests (request-42 and request-43, same title) both got 'workflow-1':"
        " the second would be merged into the first",
    )
    assert Path(verdict.run_dir).name.startswith("key-probe-")
    verdict = operation_key.check(KEYS["not a string"][0])
    assert (verdict.status, verdict.message) == (
        "incorrect",
        f"the key must be a string (text), not ('{ONE}', 1)",
    )
    assert Path(verdict.run_dir).name.startswith("key-probe-")


def test_a_key_that_raises_only_in_the_resume_is_an_error_at_its_line_not_correct():
    """The probes' calls are fine; in the real run the first process creates the ticket and is
    killed, and the resume's call raises: the one ticket is the first run's, not the resume's."""
    raises_when_resumed = (
        "def operation_key(state):\n"
        "    import os\n"
        '    if os.path.exists("ledger.jsonl"):\n'
        '        if os.path.exists("called"):\n'
        '            raise RuntimeError("the resume has no key")\n'
        '        open("called", "w").close()\n'
        '    return state["operation_id"]\n'
    )
    verdict = operation_key.check(raises_when_resumed)
    assert verdict.status == "error", str(verdict)
    assert verdict.message.startswith(
        'your code raised RuntimeError: the resume has no key, at line 5: raise RuntimeError("the'
        ' resume has no key")'
    ), verdict.message
    assert results(verdict.run_dir)["exits"] == {"first": -9, "resume": 1}


def test_the_real_kill_decides_and_a_run_that_failed_by_itself_gives_no_verdict(monkeypatch):
    calls: list = []
    ran = {"after_resume": 2, "receipts": [1, 2], "run_dir": "/runs/k", "failure": None}

    def run_interrupt(*args: object, **kwargs: object) -> dict:
        calls.append((args, kwargs))
        return {**ran, "exits": {"first": -9, "resume": 0}}

    monkeypatch.setattr(lesson3, "run_interrupt", run_interrupt)
    answer = "def settle(state):\n    return state['operation_id']\n"
    verdict = operation_key.check(answer)
    assert (verdict.status, verdict.message, verdict.run_dir) == (
        "incorrect",
        "killed after the ticket was created, then resumed in a new process: 2 tickets"
        " (receipts [1, 2])",
        "/runs/k",
    )
    renamed = answer.replace("def settle(", "def operation_key(")
    assert calls == [(("custom", "combined", True, "after_create"), {"key_source": renamed})]
    ran.update(after_resume=1, failure="resume worker timed out after 60 s")
    verdict = operation_key.check(answer)
    assert (verdict.status, verdict.message, verdict.run_dir) == (
        "no verdict",
        "the real kill after the ticket was created, and its resume failed (resume worker timed"
        " out after 60 s), so it says nothing about your answer: check again",
        "/runs/k",
    )


def test_each_kill_point_counts_the_tickets_its_resume_left():
    measured = {p: lesson3.interrupt_case(p) for p in ("after_create", "paused")}
    assert [(m.value, m.story, m.failure) for m in measured.values()] == [
        (3, "receipts [1, 2, 3]", None),
        (2, "receipts [1, 2]", None),
    ]
    ran = results(measured["after_create"].run_dir)
    assert {k: ran[k] for k in ("key", "layout", "kill_at", "cross_process")} == {
        "key": "fresh",
        "layout": "combined",
        "kill_at": "after_create",
        "cross_process": True,
    }
    verdict = predict_kills.check({"before_create": 2, "after_create": 2, "paused": 2})
    assert "after_create: you said 2, the real run gave 3 (receipts [1, 2, 3])" in str(verdict)


def test_a_gate_that_lets_a_candidate_through_or_holds_it_back_hears_its_real_runs():
    verdict = release_gate.check(GATES["one ticket after the crash is enough"][0])
    assert (verdict.status, verdict.message) == (
        "incorrect",
        "your gate released “stable key, review after the ticket”, whose real runs gave:"
        " tickets_after_crash = 1, tickets_after_rejection = 1, changed_title = 'refused'",
    )
    assert results(verdict.run_dir)["key"] == "stable"
    verdict = release_gate.check(GATES["nothing ever ships"][0])
    assert (verdict.status, verdict.message) == (
        "incorrect",
        "your gate held back “stable key, approve then execute”, whose real runs gave:"
        " tickets_after_crash = 1, tickets_after_rejection = 0, changed_title = 'refused'",
    )
    ran = results(verdict.run_dir)  # the last scenario that ran: the rejection
    assert (ran["key"], ran["layout"], ran["kill_at"], ran["approval"]) == (
        "stable",
        "split",
        "none",
        False,
    )


def test_the_candidate_that_marks_the_ticket_filed_first_loses_it_to_the_crash():
    """Its mark is committed before it asks for the ticket: the crash's kill comes between the
    two, and the recovery, finding the mark, skips filing. A gate content with at most one
    ticket releases it; its other scenarios are the safe candidate's."""
    tickets, run_dir = lesson3.run_scenario("stable_mark_first", "tickets_after_crash")
    ran = results(run_dir)
    assert (tickets, ran["layout"], ran["kill_at"], ran["exits"]) == (
        0,
        "mark_first",
        "before_create",
        {"first": 0, "resume": -9, "recover": 0},
    )
    assert read_tables(Path(run_dir) / TICKETS_FILE)["ticket"].rows == []
    assert read_tables(Path(run_dir) / "filed.db")["filed"].rows == [[ONE]]
    assert ran["recover"]["resumed_how"] == ["invoke(None)"]  # it ran execute again: skipped
    others = ("tickets_after_rejection", "changed_title")
    assert [lesson3.run_scenario("stable_mark_first", s)[0] for s in others] == [0, "refused"]
    verdict = release_gate.check(GATES["at most one ticket after the crash"][0])
    assert (verdict.status, verdict.message) == (
        "incorrect",
        "your gate released “stable key, approve, marked filed before the ticket”, whose real"
        " runs gave: tickets_after_crash = 0, tickets_after_rejection = 0, changed_title ="
        " 'refused'",
    )


def test_the_safe_gate_is_correct_and_a_scenario_that_failed_gives_no_verdict(monkeypatch):
    right = gate(
        'return trial("tickets_after_crash") == 1 and trial("tickets_after_rejection") == 0'
        ' and trial("changed_title") == "refused"'
    )
    verdict = release_gate.check(right)
    assert (verdict.status, verdict.message) == (
        "correct",
        "of 7 candidate graphs, your gate released only “stable key, approve then execute”",
    )
    assert results(verdict.run_dir)["key"] == "stable"

    def run_interrupt(*args: object, **kwargs: object) -> dict:
        return {"failure": "first worker timed out after 60 s", "run_dir": "/runs/g"}

    monkeypatch.setattr(lesson3, "run_interrupt", run_interrupt)
    verdict = release_gate.check(right)
    assert (verdict.status, verdict.message, verdict.run_dir) == (
        "no verdict",
        "a real run for “fresh UUID, review after the ticket” failed (first worker timed out"
        " after 60 s), so it says nothing about your answer: check again",
        "/runs/g",
    )


def test_a_gate_that_returns_no_bool_or_asks_for_no_scenario_is_refused():
    verdict = release_gate.check(gate('return trial("tickets_after_crash")'))
    assert (verdict.status, verdict.message) == (
        "error",
        "your gate must return True or False, not 3\nMend it and check again.",  # fresh_review's
    ), str(verdict)
    verdict = release_gate.check(gate('return trial("tickets") == 1'))
    assert verdict.status == "error"
    assert verdict.message.startswith(
        "your code raised ValueError: no scenario 'tickets'; the scenarios: tickets_after_crash,"
        ' tickets_after_rejection, changed_title, at line 2: return trial("tickets") == 1'
    ), verdict.message


def test_a_kill_points_run_that_failed_by_itself_gives_no_verdict(monkeypatch):
    why = "resume worker timed out after 60 s"
    ran = {"after_resume": 3, "receipts": [1, 2, 3], "run_dir": "/runs/p", "failure": why}
    monkeypatch.setattr(lesson3, "run_interrupt", lambda *args, **kwargs: ran)
    assert lesson3.interrupt_case("paused") == (3, "receipts [1, 2, 3]", "/runs/p", why)
    verdict = predict_kills.check({"before_create": 3, "after_create": 3, "paused": 3})
    assert (verdict.status, verdict.run_dir) == ("no verdict", "/runs/p"), str(verdict)
    assert why in verdict.message


def test_a_key_that_does_not_return_in_time_is_told_so_with_its_probes_folder():
    slow = key("import time\ntime.sleep(30)\nreturn state['operation_id']")
    started = time.monotonic()
    with pytest.raises(ReaderCodeError) as raised:
        lesson3.keys_after_restart(slow, "operation_key", seconds=1)
    # the reader's 1 s, not a worker's default 10 s: far from both, whatever the load
    assert time.monotonic() - started < 8
    assert str(raised.value) == "your key function did not return within 1 s"
    assert Path(raised.value.run_dir).name.startswith("key-probe-")


def test_a_gate_that_does_not_compile_or_define_itself_is_an_error_naming_it():
    verdict = release_gate.check("def release_gate(trial):\n    return trial(\n")
    assert verdict.status == "error", str(verdict)
    assert verdict.message.startswith("your code raised SyntaxError: "), verdict.message
    verdict = release_gate.check("def release_gate(trial=undefined_name):\n    return True\n")
    assert (verdict.status, verdict.message) == (
        "error",
        "your code raised NameError: name 'undefined_name' is not defined\nMend it and check"
        " again.",
    )


def test_a_changed_title_is_refused_under_a_stable_key_and_a_new_ticket_under_another():
    assert [lesson3.changed_title(*lesson3.CANDIDATES[c][::2]) for c in lesson3.CANDIDATES] == [
        "new ticket",
        "refused",
        "new ticket",
        "new ticket",
        "refused",
        "refused",
        "refused",
    ]
    verdict = release_gate.check(GATES["zero actions after a rejection is enough"][0])
    assert (verdict.status, verdict.message) == (
        "incorrect",
        "your gate released “fresh UUID, approve then execute”, whose real runs gave:"
        " tickets_after_crash = 2, tickets_after_rejection = 0, changed_title = 'new ticket'",
    )


def test_the_restarted_probe_runs_in_another_year_month_day_hour_and_minute():
    """Each field on its own: a key of any one would pass a retry that left it alone (a day
    and an hour later is the same month on all days but the last of one)."""
    fields = "time.strftime('%Y %m %d %H %M')"
    verdict = operation_key.check(key(f"import time\nreturn state['operation_id'] + {fields}"))
    before, after = (read_report(Path(verdict.run_dir), r)["keys"] for r in ("before", "after"))
    then, later = (k[-17:-1].split() for k in (before[0], after[1]))  # the reprs' last 16
    assert len(then) == 5 and all(a != b for a, b in zip(then, later, strict=True)), (then, later)
    assert verdict.message == changed_by_restart(verdict.run_dir, before[0], after[1])


def test_a_key_that_raises_or_ends_its_worker_is_an_error_with_the_probes_folder():
    verdict = operation_key.check(key("return state['operation_idd']"))
    assert (verdict.status, verdict.message) == (
        "error",
        "your code raised KeyError: 'operation_idd', at line 2: return state['operation_idd']"
        "\nMend it and check again.",
    )
    assert Path(verdict.run_dir).name.startswith("key-probe-")
    verdict = operation_key.check(key("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"))
    assert (verdict.status, verdict.message) == (
        "error",
        "the before worker ended (exit status -9) before your key function returned: no error"
        " shown\nMend it and check again.",
    )
    assert Path(verdict.run_dir).name.startswith("key-probe-")


def test_keys_that_change_in_the_first_worker_alone_are_the_ones_shown():
    counted = key(  # counts in the first worker; the same in the restarted one
        "import os\n"
        'with open("calls", "a") as calls:\n'
        '    calls.write("x")\n'
        "n = os.path.getsize('calls')\n"
        "return state['operation_id'] + (f':{n}' if n <= 3 else '')"
    )
    verdict = operation_key.check(counted)
    assert verdict.message == (
        f"the same request got two keys in one process ('{ONE}:1' and '{ONE}:2'): every resume"
        " would create a new ticket"
    )


def test_only_the_answers_own_def_is_renamed_for_the_real_run():
    shadowed = (  # a helper inside it, under the same name
        "def settle(state):\n"
        "    def settle(request):\n"
        "        return request['operation_id']\n"
        "    return settle(state)\n"
    )
    verdict = operation_key.check(shadowed)
    assert verdict.status == "correct", str(verdict)
    assert results(verdict.run_dir)["key_source"] == shadowed.replace(
        "def settle(state)", "def operation_key(state)"
    )
