"""Lesson 3 · Interrupt and resume (notebooks/03_interrupt_and_resume.ipynb): its checked exercises.

A key is judged across a restart: computed in a worker, then in another that restarts first
(another pid, parent pid, hash seed, environment and host, its clocks in another year, month,
day, hour and minute; see `labkit.bench.restart`), then a real SIGKILL and a resume in a new
process.

    lesson3.operation_key.check(operation_key)   # .hint(), .solution()

The release gate (study 001's closing advice) is judged on seven real candidate graphs: the
reader's gate must let through exactly the one that keeps one ticket after a crash and a resume
(not two, and not none: one marks the ticket filed before asking for it), none after a rejected
approval, and refuses a changed title under the same operation.

What the verdicts and hints say is in the catalogue, `lesson3.toml`.
"""

from __future__ import annotations

import json
import re
import traceback
from collections.abc import Callable
from pathlib import Path

from labkit.bench.folders import holds_run_dirs, new_run_dir
from labkit.bench.launcher import WorkerProcess, read_report
from labkit.language import say
from labkit.language.failures import worker_name
from labkit.studies.interrupt_resume.contract import (
    FIRST_INPUT,
    KEY_FILE,
    TENANT,
    ask_ticket_service,
    key_function,
)
from labkit.studies.interrupt_resume.experiment import run_interrupt
from labkit.workshop.checks import (
    WHOLE_NUMBER,
    Exercise,
    Measured,
    ReaderCodeError,
    Verdict,
    code_error,
    each,
    judge_predictions,
    no_verdict,
    source_of,
    worker_code_error,
)

__all__ = ["operation_key", "predict_kills", "release_gate"]


def interrupt_case(point: str) -> Measured:
    """Tickets after a SIGKILL at `point` and a resume (fresh key, combined layout)."""

    r = run_interrupt("fresh", "combined", True, point)
    story = say("lesson3.predict_kills.story", receipts=r["receipts"])
    return Measured(r["after_resume"], story, r["run_dir"], r["failure"])


ONE = {"operation_id": "request-42/create-ticket/v1", "title": "Printer offline"}
OTHER = {"operation_id": "request-43/create-ticket/v1", "title": "Printer offline"}
RETITLED = {**ONE, "title": "Printer on fire"}  # the same operation, asked for differently


# The restarted worker gets the requests in another order: a key must not count what it saw.
REQUESTS = {"before": [ONE, ONE, OTHER, RETITLED], "after": [OTHER, ONE, ONE]}


def probe_keys(run_dir: Path, role: str, source: str, name: str, seconds: float) -> dict:
    """One key probe worker (`key_probe.probe`) in the run folder: what it left in its report
    ({pid, ppid, host, hash, keys}), or the reader's error as a ReaderCodeError."""
    job = {"source": source, "name": name, "requests": REQUESTS[role], "restart": role == "after"}
    process = WorkerProcess(run_dir, role, "labkit.workshop.key_probe:probe", job, timeout=seconds)
    with process:
        process.wait()
    worker, found = process.report(), read_report(run_dir, role)
    if worker.timed_out:
        said = say("lesson3.operation_key.timed_out", seconds=seconds)
        raise ReaderCodeError(said, str(run_dir))
    if "error" in found:
        raise ReaderCodeError(code_error(found["error"], found["line"], source), str(run_dir))
    if "keys" not in found:
        last = (
            worker.stderr.strip().splitlines() or [say("lesson3.operation_key.no_error_shown")]
        )[-1]
        who = worker_name(role)  # the worker before the restart, or after it
        said = say("lesson3.operation_key.ended_early", role=who, code=worker.exit_code, last=last)
        raise ReaderCodeError(said, str(run_dir))
    return found


@holds_run_dirs
def keys_after_restart(source: str, name: str, seconds: float = 15) -> tuple[Path, dict, dict]:
    """The key function in two workers, one after the other: "before" on [ONE, ONE, OTHER,
    RETITLED], then "after", restarted (another pid, parent pid, hash seed, environment and
    host, its clocks in another year, month, day, hour and minute), on [OTHER, ONE, ONE]; each
    gives {pid, ppid, host, hash, keys}."""
    run_dir = new_run_dir(None, prefix="key-probe-")
    before, after = (probe_keys(run_dir, role, source, name, seconds) for role in REQUESTS)
    return run_dir, before, after


def failed_kill(r: dict, source: str) -> Verdict:
    """The real kill and resume did not go as planned: the reader's error, at their line, if
    their key raised in the graph (where the probe's calls did not reach it); else a run that
    failed by itself (a timeout), which says nothing about the key. Never a count of tickets:
    those of a resume that never ran."""
    for role in r["exits"]:
        stderr = Path(r["run_dir"], f"{role}.stderr")
        text = stderr.read_text() if stderr.exists() else ""
        frames = re.findall(rf'File "{re.escape(KEY_FILE)}", line (\d+)', text)
        if frames:
            error = text.strip().splitlines()[-1]
            raise ReaderCodeError(worker_code_error(error, int(frames[-1]), source), r["run_dir"])
    run = say("lesson3.operation_key.run_after_create")
    return no_verdict(run, r["failure"], r["run_dir"])


def judge_operation_key(answer: Callable | str) -> Verdict:
    """Same request, same key: in one process and after a restart; another request, another
    key; the same operation with another title, the same key (the service refuses the change);
    then a real SIGKILL after the ticket was created and a resume in a new process."""

    source, name = source_of(answer)
    run_dir, before, after = keys_after_restart(source, name)
    same, again, other, retitled = before["keys"]
    other_later, same_later, again_later = after["keys"]
    if same != again or same_later != again_later:
        first, second = (same, again) if same != again else (same_later, again_later)
        said = say("lesson3.operation_key.two_keys", first=first, second=second)
        return Verdict("incorrect", said, str(run_dir))
    for key, key_later in ((same, same_later), (other, other_later)):
        if key != key_later:
            said = say(
                "lesson3.operation_key.changed_by_restart",
                key=key,
                key_later=key_later,
                pid=before["pid"],
                pid_later=after["pid"],
                ppid=before["ppid"],
                ppid_later=after["ppid"],
                host=before["host"],
                host_later=after["host"],
                hash=before["hash"],
                hash_later=after["hash"],
            )
            return Verdict("incorrect", said, str(run_dir))
    if other == same:
        return Verdict("incorrect", say("lesson3.operation_key.merged", key=same), str(run_dir))
    if retitled != same:
        said = say("lesson3.operation_key.retitled", key=same, key_retitled=retitled)
        return Verdict("incorrect", said, str(run_dir))
    if not same.startswith(("'", '"')):
        said = say("lesson3.operation_key.not_a_string", key=same)
        return Verdict("incorrect", said, str(run_dir))
    renamed = re.sub(rf"\bdef {re.escape(name)}\(", "def operation_key(", source, count=1)
    r = run_interrupt("custom", "combined", True, "after_create", key_source=renamed)
    if r["failure"]:
        return failed_kill(r, source)
    if r["after_resume"] != 1:
        said = say(
            "lesson3.operation_key.after_create", tickets=r["after_resume"], receipts=r["receipts"]
        )
        return Verdict("incorrect", said, r["run_dir"])
    said = say("lesson3.operation_key.correct", key=same, receipts=r["receipts"])
    return Verdict("correct", said, r["run_dir"])


operation_key = Exercise(
    "lesson3.operation_key",
    "03_operation_key.py",
    starter="""def operation_key(state):
    import uuid

    return str(uuid.uuid4())""",
    judge=judge_operation_key,
    code=True,
)

predict_kills = Exercise(
    "lesson3.predict_kills",
    "03_predict_kills.py",
    starter="""tickets_after = {
    "before_create": None,
    "after_create": None,
    "paused": None,
}""",
    judge=lambda predicted: judge_predictions(
        predicted, ("before_create", "after_create", "paused"), each(interrupt_case), WHOLE_NUMBER
    ),
)


# The release gate: seven candidates (key strategy, layout, a key function for "custom"), each
# by a code; the reader reads its name, `lesson3.release_gate.candidate.<code>`. Each of the
# three scenarios is the only one that refuses some candidate (the crash, two: one with a
# ticket too many, one with a ticket too few).
TITLE_IN_KEY = (
    "def operation_key(state):\n    return f\"{state['operation_id']}/{state['title']}\"\n"
)
# A fresh UUID kept for the process's life: the same key on every call, another after a restart.
KEY_PER_PROCESS = (
    "import uuid\n\nKEYS = {}\n\n\ndef operation_key(state):\n"
    "    return KEYS.setdefault(state['operation_id'], str(uuid.uuid4()))\n"
)
CANDIDATES = {
    "fresh_review": ("fresh", "combined", None),
    "stable_review": ("stable", "combined", None),
    "fresh_approve": ("fresh", "split", None),
    "title_approve": ("custom", "split", TITLE_IN_KEY),
    "process_approve": ("custom", "split", KEY_PER_PROCESS),
    "stable_mark_first": ("stable", "mark_first", None),
    "stable_approve": ("stable", "split", None),
}
RELEASE = "stable_approve"
# The crash's SIGKILL, by layout: between the node's first write and the next, where the two
# disagree. The ticket comes first in "combined" and "split" (the checkpoint after it);
# "mark_first" commits its "filed" mark first, and a kill before the ticket loses it.
CRASH_AT = {"combined": "after_create", "split": "after_create", "mark_first": "before_create"}
SCENARIOS = ("tickets_after_crash", "tickets_after_rejection", "changed_title")
GATE_FILE = "<your gate>"


def candidate_name(candidate: str) -> str:
    """A candidate as the reader reads it: "stable key, approve then execute"."""
    return say(f"lesson3.release_gate.candidate.{candidate}")


class ScenarioFailed(Exception):
    """A real run of a scenario failed by itself: it says nothing about the reader's gate."""

    def __init__(self, failure: str, run_dir: str) -> None:
        super().__init__(failure)
        self.run_dir = run_dir


def changed_title(key: str, key_source: str | None) -> str:
    """The same request sent again with another title: what the ticket service answers."""
    operation_key = key_function({"key": key, "key_source": key_source})
    changed = {**FIRST_INPUT, "title": "Printer on fire"}
    requests = [
        (TENANT, operation_key(state), json.dumps({"title": state["title"]}))
        for state in (FIRST_INPUT, changed)
    ]
    first, second = ask_ticket_service(requests)[0]
    if second.refused:
        return "refused"
    return "original ticket" if second.ticket_id == first.ticket_id else "new ticket"


def run_scenario(candidate: str, scenario: str) -> tuple[object, str | None]:
    """One scenario on one candidate, for real: its figure and its run folder."""
    key, layout, source = CANDIDATES[candidate]
    if scenario == "changed_title":
        return changed_title(key, source), None
    crash = scenario == "tickets_after_crash"
    kill_at = CRASH_AT[layout] if crash else "none"  # the rejection: a person says no, no kill
    r = run_interrupt(key, layout, crash, kill_at, key_source=source, approval=crash)
    if r["failure"]:
        raise ScenarioFailed(r["failure"], r["run_dir"])
    return r["after_resume"], r["run_dir"]


class Trials:
    """The `trial` a reader's gate calls: each scenario of one candidate, run once."""

    def __init__(self, candidate: str) -> None:
        self.candidate, self.seen, self.run_dir = candidate, {}, None

    def __call__(self, scenario: str) -> object:
        if scenario not in SCENARIOS:
            scenarios = ", ".join(SCENARIOS)
            said = say(
                "lesson3.release_gate.no_scenario", scenario=repr(scenario), scenarios=scenarios
            )
            raise ValueError(said)
        if scenario not in self.seen:
            self.seen[scenario], folder = run_scenario(self.candidate, scenario)
            self.run_dir = folder or self.run_dir
        return self.seen[scenario]

    def story(self) -> str:
        return ", ".join(f"{s} = {self(s)!r}" for s in SCENARIOS)


def gate_verdict(gate: Callable, source: str, candidate: str) -> tuple[bool, Trials]:
    """The reader's gate on one candidate; an error in it is theirs, shown at their line."""
    trials = Trials(candidate)
    try:
        said = gate(trials)
    except ScenarioFailed:
        raise
    except Exception as error:
        lines = [
            f.lineno for f in traceback.extract_tb(error.__traceback__) if f.filename == GATE_FILE
        ]
        message = f"{type(error).__name__}: {error}"
        raise ReaderCodeError(code_error(message, lines[-1] if lines else None, source)) from None
    if not isinstance(said, bool):
        raise ReaderCodeError(say("lesson3.release_gate.not_a_bool", said=repr(said)))
    return said, trials


def judge_release_gate(answer: Callable | str) -> Verdict:
    """The reader's gate on every candidate: it must release exactly the one safe graph."""
    source, name = source_of(answer)
    namespace: dict = {}
    try:
        exec(compile(source, GATE_FILE, "exec"), namespace)
    except Exception as error:
        raise ReaderCodeError(
            code_error(f"{type(error).__name__}: {error}", None, source)
        ) from None
    gate = namespace[name]
    for candidate in CANDIDATES:
        try:
            said, trials = gate_verdict(gate, source, candidate)
        except ScenarioFailed as failed:
            run_for = say("lesson3.release_gate.run_for", candidate=candidate_name(candidate))
            return no_verdict(run_for, str(failed), failed.run_dir)
        if said != (candidate == RELEASE):
            message = say(
                f"lesson3.release_gate.{'released' if said else 'held_back'}",
                candidate=candidate_name(candidate),
                story=trials.story(),
            )
            return Verdict("incorrect", message, trials.run_dir)
    message = say(
        "lesson3.release_gate.correct", count=len(CANDIDATES), release=candidate_name(RELEASE)
    )
    return Verdict("correct", message, trials.run_dir)


release_gate = Exercise(
    "lesson3.release_gate",
    "03_release_gate.py",
    starter="""def release_gate(trial):
    return True""",
    judge=judge_release_gate,
    code=True,
)
