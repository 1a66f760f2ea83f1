"""The view of study 001's "why not the thread_id" (lesson 3): a row per request, its thread,
its key, what the ticket service answered and what that means for the request; and the
environment the workers run on beside study 001's."""

from __future__ import annotations

from collections.abc import Mapping

from IPython.display import HTML, display

from labkit.language import say
from labkit.language.failures import failure_text
from labkit.studies.interrupt_resume.thread_key import tickets_per_request
from labkit.views.tables import grid_html, headers

__all__ = ["environment_line", "show_thread_key", "thread_key_html"]

COLUMNS = ("thread", "request", "title", "key", "answer", "verdict")


def answer_words(answer: Mapping) -> str:
    if answer["ticket_id"] is None:
        return say(f"thread_key.refused.{answer['refused']}")
    return say("thread_key.ticket", id=answer["ticket_id"])


def thread_key_html(result: Mapping) -> str:
    """A row per request as it was sent; the service's answer and its meaning."""
    rows = [
        [thread, operation, title, answer["key"], answer_words(answer)]
        + [say(f"thread_key.verdict.{verdict}")]
        for (thread, operation, title), answer, verdict in zip(
            result["requests"], result["answers"], result["verdicts"], strict=True
        )
    ]
    return grid_html(headers("thread_key.column", COLUMNS), rows)


def show_thread_key(result: Mapping) -> None:
    if result["failure"]:
        print(say("thread_key.failed", failure=failure_text(result["failure"])))
        return
    display(HTML(thread_key_html(result)))
    each = say("facts.list_separator").join(
        say("thread_key.per_request", request=request, count=count)
        for request, count in tickets_per_request(result["answers"]).items()
    )
    key = say(f"thread_key.key.{result['key']}")
    print(say("thread_key.tickets", key=key, count=len(result["tickets"]), each=each))


def environment_line(found: Mapping) -> str:
    """Study 001's versions and the workers' own, one line."""
    return say(
        "thread_key.environment", **{f"{k}_then": v for k, v in found["study"].items()}
    ) + say("thread_key.environment_here", **found["here"])
