"""Issue 13: the points of the three source studies the lessons now run, each on real rows and
real processes: a consuming read and a pending state before a call (study 000), the ticket
service's contract, a rejected approval and one resume (study 001), an in-memory checkpointer
across a restart, what the installed LangGraph says about durability, and study 004's
figures beside today's (study 004)."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import STDLIB, worker_imports

from labkit.bench.errors import LabError
from labkit.language import catalogue
from labkit.studies.commit_window.stores import KEY, PAYLOAD
from labkit.studies.commit_window.tool_runs import run_tool_step
from labkit.studies.durability.experiment import (
    DurabilitySpec,
    clean_run,
    durability_matrix,
    run_trials,
)
from labkit.studies.durability.in_memory import run_in_memory_restart
from labkit.studies.durability.library import durability_in_library
from labkit.studies.durability.pitfalls import run_pitfall
from labkit.studies.durability.reported import STUDY_004_FIGURES
from labkit.studies.interrupt_resume.contract import ask_ticket_service, entry_key
from labkit.studies.interrupt_resume.experiment import run_interrupt
from labkit.views.durability_reported import beside_today


def rows(path: Path, query: str) -> list[tuple]:
    """Rows read back from a run's file through a new read-only connection."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(query).fetchall()
    finally:
        db.close()


# --- study 000: a consuming read, a pending state before the call


@pytest.mark.parametrize("kill_mode", ["exit", "sigkill"])
def test_a_queue_pop_repeated_after_a_crash_consumes_the_next_job_and_loses_the_first(
    tmp_path, kill_mode
):
    r = run_tool_step("queue_pop", "popped", kill_mode, out=tmp_path / "run")
    assert r.workers[0].exit_code == (91 if kill_mode == "exit" else -9)
    assert rows(r.run_dir / "queue.db", "SELECT job FROM jobs") == [("job-3",)]
    assert rows(r.run_dir / "control.db", "SELECT payload FROM receipts") == [("job-2",)]
    assert rows(r.run_dir / "control.db", "SELECT done FROM progress") == [(1,)]
    assert r.outcome == "lost"  # job-1 left the queue and was never processed


def test_a_claim_under_the_operation_key_finds_its_own_job_on_the_retry(tmp_path):
    r = run_tool_step("queue_claim", "popped", out=tmp_path / "run")
    assert rows(r.run_dir / "control.db", "SELECT op_key, payload FROM receipts") == [
        (KEY, "job-1")
    ]
    taken = rows(r.run_dir / "queue.db", "SELECT job FROM jobs WHERE taken_by IS NOT NULL")
    assert taken == [("job-1",)] and r.outcome == "consistent"


@pytest.mark.parametrize(
    ("point", "receipts", "settled"), [("pending", 0, "sent by"), ("effect", 1, "confirmed")]
)
def test_a_pending_state_before_the_call_is_kept_unknown_then_reconciled_to_one_receipt(
    tmp_path, point, receipts, settled
):
    r = run_tool_step("pending_first", point, out=tmp_path / "run")
    assert r.outcome == "unknown" and r.after.done == 0 and r.after.receipts == receipts
    assert r.after.table("pending").rows == [[KEY, "unknown"]]  # recovery did not guess
    assert [w.role for w in r.workers] == ["first", "recovery", "reconcile"]
    effect = rows(r.run_dir / "effect.db", "SELECT op_key, payload FROM receipts")
    assert effect == [(KEY, PAYLOAD)]  # one call, whether the killed one had made it or not
    [(state,)] = rows(r.run_dir / "control.db", "SELECT state FROM pending")
    assert state.startswith(settled)
    assert rows(r.run_dir / "control.db", "SELECT done FROM progress") == [(1,)]
    assert json.loads((r.run_dir / "results.json").read_text())["outcome"] == "unknown"


def test_a_pending_step_killed_before_it_saved_anything_just_runs_once(tmp_path):
    r = run_tool_step("pending_first", "start", out=tmp_path / "run")
    assert r.outcome == "consistent" and r.reconciled is None and r.after.receipts == 1


def test_the_tool_steps_worker_imports_only_the_standard_library():
    assert worker_imports("labkit.studies.commit_window.tool_steps") <= STDLIB | {"labkit"}


def test_bad_tool_step_input_is_one_line_naming_the_choices(tmp_path):
    with pytest.raises(LabError, match="queue_pop, queue_claim, pending_first"):
        run_tool_step("pop")
    with pytest.raises(LabError, match="start, popped, done"):
        run_tool_step("queue_pop", "effect")
    with pytest.raises(LabError, match="exit, sigkill"):
        run_tool_step("queue_pop", "popped", "sigterm")
    assert not list(tmp_path.iterdir())


# --- study 001: the ticket service's contract, a rejected approval, one resume

KEY_42 = entry_key("request-42")
BODY = '{"title": "Printer offline", "priority": 2}'


def test_the_same_key_under_another_tenant_is_that_tenants_own_ticket():
    answers, tickets = ask_ticket_service([("team-A", KEY_42, BODY), ("team-B", KEY_42, BODY)])
    assert [a.ticket_id for a in answers] == [1, 2]
    assert [(t[1], t[2]) for t in tickets] == [("team-A", KEY_42), ("team-B", KEY_42)]


def test_a_body_differing_only_in_formatting_is_the_same_payload_and_every_field_counts():
    reformatted = '{ "priority":2,\n  "title": "Printer offline" }'
    changed = '{"title": "Printer offline", "priority": 1}'  # the title alone is the same
    requests = [("team-A", KEY_42, b) for b in (BODY, reformatted, changed)]
    answers, tickets = ask_ticket_service(requests)
    assert [a.ticket_id for a in answers] == [1, 1, None]
    assert answers[2].refused["code"] == "payload_conflict" and len(tickets) == 1
    assert answers[2].refused["held"] == '{"priority": 2, "title": "Printer offline"}'


def test_a_key_switched_by_the_caller_is_refused_only_where_an_entry_point_issued_the_keys():
    switched = [("team-A", KEY_42, BODY), ("team-A", KEY_42 + "/retry-2", BODY)]
    _, trusting = ask_ticket_service(switched)
    answers, checked = ask_ticket_service(switched, issued=[("team-A", KEY_42)])
    assert len(trusting) == 2 and len(checked) == 1
    assert answers[1].refused == {"code": "not_issued"}


def test_bad_requests_to_the_ticket_service_are_one_line():
    with pytest.raises(LabError, match=r"\(tenant, key, body\)"):
        ask_ticket_service([("team-A", KEY_42)])
    with pytest.raises(LabError, match="not a JSON object with a title"):
        ask_ticket_service([("team-A", KEY_42, "Printer offline")])
    with pytest.raises(LabError, match=r"\(tenant, key\)"):
        ask_ticket_service([("team-A", KEY_42, BODY)], issued=["team-A"])


def test_one_click_on_continue_still_runs_the_node_twice_and_makes_two_tickets():
    r = run_interrupt("fresh")
    assert r["resumes"] == 1 and r["node_calls"] == 2 and len(r["tickets"]) == 2


def test_a_rejected_approval_gives_zero_actions_only_when_approval_comes_first():
    split = run_interrupt("fresh", "split", approval=False)
    combined = run_interrupt("fresh", "combined", approval=False)
    assert split["tickets"] == [] and split["node_calls"] == 0 and split["resumes"] == 1
    assert len(combined["tickets"]) == 2  # the review came after the ticket, and re-ran it
    assert not split["failure"] and not combined["failure"]


# --- study 004: an in-memory checkpointer, the library's own words, the study's figures


def test_an_in_memory_checkpointer_loses_every_checkpoint_when_its_process_is_killed():
    r = run_in_memory_restart()
    assert r["failure"] is None and r["first_exit"] == -9
    assert r["checkpoints_before_kill"] == 4  # the input, __start__, a and b, as with sync
    assert r["checkpoints_after_restart"] == 0 and r["resumed"] is False
    assert r["recovery_error"].startswith("EmptyInputError")
    assert not (Path(r["run_dir"]) / "checkpoints.db").exists()  # nothing was ever on disk


def test_the_default_durability_and_the_three_definitions_come_from_the_installed_library():
    facts = durability_in_library()
    assert facts["literal"] == ("sync", "async", "exit")
    assert facts["default"] == "async" and '"async")' in facts["default_at"]["text"]
    assert facts["default_at"]["file"] == "langgraph/pregel/main.py"
    import langgraph.pregel.main as source  # the test may import LangGraph; the kernel never

    lines = Path(source.__file__).read_text().splitlines()
    assert lines[facts["default_at"]["line"] - 1].strip() == facts["default_at"]["text"]
    for mode, text in facts["definitions"].items():
        assert text.startswith(f'`"{mode}"`: Changes are persisted')
    assert set(facts["definitions"]) == {"sync", "async", "exit"}


def test_study_004s_figures_stand_beside_figures_computed_from_todays_runs():
    matrix = durability_matrix(graphs=("parallel",), modes=("sync", "async"), trials=1)
    slow = run_trials([DurabilitySpec("parallel", m, 250) for m in ("sync", "async")], 1)
    modes = ("exit", "async", "sync")
    clean = {
        ms: {m: clean_run(DurabilitySpec("parallel", m, ms)) for m in modes} for ms in (0, 250)
    }
    table = dict(
        (study, today)
        for _, study, today in beside_today(matrix, slow, clean, run_pitfall("mistyped_durability"))
    )
    said = {k: catalogue("en")[f"durability.reported.study.{k}"] for k in STUDY_004_FIGURES}
    assert said["writes_at_kill"] == "sync 11 rows, async 14 rows (the same graph, 4 samples each)"
    assert set(table) == set(said.values())  # the study's words, as quoted
    writes = {t.spec.mode: t.writes for t in matrix}
    assert table[said["writes_at_kill"]].startswith(
        f"sync {writes['sync']} rows, async {writes['async']} rows"
    )
    counts = " / ".join(str(clean[0][m]["checkpoints"]) for m in modes)
    assert table[said["clean_checkpoints_local"]] == counts == "1 / 5 / 5"
    assert table[said["mistyped_mode"]].startswith("runs to the end, n=4")


def test_the_new_choices_and_views_refuse_bad_input_in_one_line():
    from labkit.studies.interrupt_resume.experiment import InterruptSpec
    from labkit.views import show_tool_run
    from labkit.views.durability import show_library_facts, show_study_figures
    from labkit.views.interrupt_resume import show_ticket_answers

    cases = [
        (lambda: InterruptSpec(approval="no"), "approval must be True or False"),
        (lambda: show_tool_run("queue_pop"), "a ToolRun (what run_tool_step returns)"),
        (lambda: show_ticket_answers([1], []), "the answers ask_ticket_service returns first"),
        (lambda: show_study_figures("rows"), "the rows beside_today returns"),
        (lambda: show_library_facts({}), "what durability_in_library returns"),
        (lambda: beside_today([], [], {}, {}), "clean must map 0 and 250"),
    ]
    for call, says in cases:
        with pytest.raises(LabError, match=re.escape(says)):
            call()


def labkit_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "labkit", *args], capture_output=True, text=True, timeout=120
    )


def test_the_command_line_runs_the_new_points_and_refuses_bad_input_in_one_line():
    popped = labkit_cli("tool-step", "queue_pop", "--kill-at", "popped", "--json")
    assert popped.returncode == 0, popped.stderr
    summary = json.loads(popped.stdout)
    assert summary["outcome"] == "lost" and summary["after"]["receipts"] == ["job-2"]
    assert Path(summary["run_dir"]).is_dir()
    rejected = labkit_cli("interrupt", "--layout", "split", "--reject", "--json")
    assert rejected.returncode == 0 and json.loads(rejected.stdout)["tickets"] == []
    library = labkit_cli("library", "--json")
    assert library.returncode == 0 and json.loads(library.stdout)["default"] == "async"
    wrong = labkit_cli("tool-step", "queue_pop", "--kill-at", "effect")
    assert wrong.returncode == 2 and wrong.stdout == ""
    assert wrong.stderr.strip().splitlines() == [
        "labkit: error: unknown kill point for queue_pop 'effect'; "
        "choose one of: start, popped, done, none"
    ]
