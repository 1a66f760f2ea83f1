"""Study 001 §04, run (lesson 3): the thread's id as the ticket's key merges a session's second
request into its first (refused: no ticket) and misses the first request retried on a new
thread (a second ticket); the operation id gives each request one ticket. Real LangGraph runs
in a forked worker on a SqliteSaver file; the service's rows read back from tickets.db."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from chinese import assert_no_english

import labkit as lk
from labkit.studies.interrupt_resume.thread_key import (
    environment,
    run_thread_key,
    tickets_per_request,
    verdicts,
)
from labkit.views.thread_key import environment_line, thread_key_html


def held(run_dir: str) -> list[tuple[str, str]]:
    """(key, title) of every ticket, from the service's file through a connection of ours."""
    db = sqlite3.connect(f"file:{Path(run_dir) / 'tickets.db'}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT op_key, payload FROM ticket ORDER BY id").fetchall()
    finally:
        db.close()
    return [(key, json.loads(payload)["title"]) for key, payload in rows]


@pytest.fixture(scope="module")
def by_thread():
    return run_thread_key("thread")


@pytest.fixture(scope="module")
def by_operation():
    return run_thread_key("operation")


def test_the_thread_as_key_loses_the_second_request_and_duplicates_the_retried_one(by_thread):
    assert by_thread["failure"] is None
    assert held(by_thread["run_dir"]) == [
        ("workflow-1", "Printer offline"),
        ("workflow-2", "Printer offline"),  # request 42 again, on a new thread: a second ticket
    ]  # and no "Badge reader broken": request 43 was refused under workflow-1's key
    assert [a["refused"] for a in by_thread["answers"]] == [None, "payload_conflict", None]
    assert by_thread["verdicts"] == ["new", "refused", "second_ticket"]
    assert tickets_per_request(by_thread["answers"]) == {
        "request-42/create-ticket/v1": 2,
        "request-43/create-ticket/v1": 0,
    }


def test_the_operation_id_as_key_gives_each_request_one_ticket(by_operation):
    assert by_operation["failure"] is None
    assert [t for _, t in held(by_operation["run_dir"])] == [
        "Printer offline",
        "Badge reader broken",
    ]
    assert by_operation["verdicts"] == ["new", "new", "original"]
    assert [a["ticket_id"] for a in by_operation["answers"]] == [1, 2, 1]


def test_a_ticket_given_to_another_request_reads_as_merged():
    answers = [{"ticket_id": 1}, {"ticket_id": 1}, {"ticket_id": None}]
    assert verdicts(answers) == ["new", "merged", "refused"]


def test_the_environment_is_the_workers_and_the_study_s(by_operation):
    found = environment()
    assert found["study"] == {"python": "3.10.21", "langgraph": "1.2.17", "sqlite": "3.53.1"}
    import importlib.metadata
    import platform
    import sqlite3 as here

    assert found["here"] == {
        "python": platform.python_version(),
        "langgraph": importlib.metadata.version("langgraph"),
        "sqlite": here.sqlite_version,
    }
    assert environment_line(found).startswith("study 001: Python 3.10.21, langgraph 1.2.17")


def test_in_chinese_the_table_holds_no_english(by_thread):
    lk.set_language("zh")
    try:
        shown = thread_key_html(by_thread) + environment_line(environment())
    finally:
        lk.set_language("en")
    assert_no_english(shown, ["thread_key"], ["thread_key.verdict.", "thread_key.refused."])


def test_an_unknown_key_is_one_line_naming_the_choices():
    from labkit.bench.errors import LabError

    with pytest.raises(LabError, match="choose one of: thread, operation"):
        run_thread_key("thread_id")
