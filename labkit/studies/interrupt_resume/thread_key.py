"""Study 001 §04, run: why the `thread_id` is not the idempotency key (lesson 3).

Study 001's graph (a ticket created before the receipt review's `interrupt()`), on a SqliteSaver
file, in one worker process, answers three requests one after the other, each run to its end
(the interrupt answered with `Command(resume=True)`):

    workflow-1  request-42  "Printer offline"        the session's first request
    workflow-1  request-43  "Badge reader broken"    a second, different request, same session
    workflow-2  request-42  "Printer offline"        the first request retried on a new thread

The ticket's key is the thread's id (`thread`) or the request's operation id (`operation`).
The ticket service answers each: a new ticket, the ticket it holds for the key, or a refusal
(the key held with another payload). Its rows are read back here from its file.

Also what study 001 printed of its environment, beside the one the workers run here.
"""

from __future__ import annotations

from pathlib import Path

from labkit.bench import server
from labkit.bench.errors import check_choice
from labkit.bench.failures import first_failure
from labkit.bench.folders import keep_json, new_run_dir
from labkit.bench.launcher import WorkerProcess, read_report
from labkit.studies.interrupt_resume.experiment import ticket_rows

__all__ = [
    "KEYS",
    "REQUESTS",
    "STUDY_001_ENVIRONMENT",
    "VERDICTS",
    "environment",
    "run_thread_key",
    "tickets_per_request",
    "verdicts",
]

KEYS = ("thread", "operation")  # the ticket's key: the thread's id, or the request's own id
REQUESTS = (  # (thread_id, operation_id, title), in the order they are sent
    ("workflow-1", "request-42/create-ticket/v1", "Printer offline"),
    ("workflow-1", "request-43/create-ticket/v1", "Badge reader broken"),
    ("workflow-2", "request-42/create-ticket/v1", "Printer offline"),
)
# What an answer means for its request: a ticket of its own; the ticket it already had (a retry
# recognised); a second ticket for a request that has one; another request's ticket (merged);
# refused (the key is held with another request's payload: this request gets none)
VERDICTS = ("new", "original", "second_ticket", "merged", "refused")
STUDY_001_ENVIRONMENT = {"python": "3.10.21", "langgraph": "1.2.17", "sqlite": "3.53.1"}


def three_requests(job: dict) -> None:
    """In a worker: each request run to its end on its thread; what the service answered."""
    from langgraph.types import Command

    from labkit.bench.gate import report
    from labkit.bench.ledger import Ledger
    from labkit.bench.tickets import PayloadConflict, Tickets
    from labkit.studies.interrupt_resume.graphs import RunContext, sqlite_graph

    graph, _ = sqlite_graph({**job, "layout": "combined"})
    tickets, ledger = Tickets(job["run_dir"]), Ledger(job["run_dir"])
    answers = []
    for thread, operation, title in REQUESTS:
        config = {"configurable": {"thread_id": thread}}
        key = thread if job["key"] == "thread" else operation
        context = RunContext(tickets, ledger, lambda state, key=key: key)
        try:
            graph.invoke({"operation_id": operation, "title": title}, config, context=context)
            result = graph.invoke(Command(resume=True), config, context=context)
        except PayloadConflict:
            answers.append({"key": key, "ticket_id": None, "refused": "payload_conflict"})
        else:
            answers.append({"key": key, "ticket_id": result["ticket_id"], "refused": None})
    report(job, answers=answers)


def verdicts(answers: list[dict]) -> list[str]:
    """Each answer's meaning for its request (one of VERDICTS), from the tickets the earlier
    answers gave each request (`REQUESTS`' operation ids)."""
    held: dict[str, set[int]] = {}  # operation id -> the tickets it was given
    found = []
    for (_, operation, _), answer in zip(REQUESTS, answers, strict=True):
        ticket, mine = answer["ticket_id"], held.setdefault(operation, set())
        others = set().union(*(ids for op, ids in held.items() if op != operation))
        if ticket is None:
            found.append("refused")
        elif ticket in others:
            found.append("merged")
        elif ticket in mine:
            found.append("original")
        else:
            found.append("second_ticket" if mine else "new")
        if ticket is not None:
            mine.add(ticket)
    return found


def tickets_per_request(answers: list[dict]) -> dict[str, int]:
    """How many distinct tickets each request (by its operation id) was given."""
    given: dict[str, set[int]] = {operation: set() for _, operation, _ in REQUESTS}
    for (_, operation, _), answer in zip(REQUESTS, answers, strict=True):
        if answer["ticket_id"] is not None:
            given[operation].add(answer["ticket_id"])
    return {operation: len(ids) for operation, ids in given.items()}


def run_here(key: str, out: str | None = None) -> dict:
    """In the trial server: one forked worker sends the three requests; the tickets after."""
    run_dir = new_run_dir(out, prefix="thread-key-")
    entry = "labkit.studies.interrupt_resume.thread_key:three_requests"
    with WorkerProcess(run_dir, "requests", entry, {"key": key}, start_mode="fork") as worker:
        worker.wait()
    answers = read_report(run_dir, "requests").get("answers", [])
    result = {
        "key": key,
        "requests": [list(request) for request in REQUESTS],
        "answers": answers,
        "verdicts": verdicts(answers) if len(answers) == len(REQUESTS) else [],
        "tickets": ticket_rows(Path(run_dir)),
        "failure": first_failure([(worker.report(), None)]),
        "run_dir": str(run_dir),
    }
    keep_json(run_dir, results=result)
    return result


def run_thread_key(key: str) -> dict:
    """The three requests with the ticket keyed by the thread's id (`thread`) or by the
    request's operation id (`operation`): per request, what the ticket service answered
    (`answers`: its key, a ticket id or a refusal), and the service's rows after."""
    check_choice("key", key, KEYS)
    return server.call("labkit.studies.interrupt_resume.thread_key:run_here", key=key)


def versions_here() -> dict:
    """In the trial server, which the workers are forks of: what they run on."""
    import importlib.metadata
    import platform
    import sqlite3

    return {
        "python": platform.python_version(),
        "langgraph": importlib.metadata.version("langgraph"),
        "sqlite": sqlite3.sqlite_version,
    }


def environment() -> dict:
    """The versions the lab's LangGraph workers run on, beside study 001's (`study`)."""
    here = server.call("labkit.studies.interrupt_resume.thread_key:versions_here")
    return {"study": STUDY_001_ENVIRONMENT, "here": here}
