"""Views of study 001's runs: the study's table, the tickets, and the checkpoint file."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import ipywidgets as widgets
from IPython.display import HTML, display

from labkit.bench.errors import check_items, check_record
from labkit.bench.failures import FAILED
from labkit.language import joined, say
from labkit.studies.interrupt_resume.contract import NOTHING_SAVED, TicketAnswer
from labkit.studies.interrupt_resume.experiment import (
    INTERRUPT_KILL_POINTS,
    KEY_STRATEGIES,
    LAYOUTS,
    run_interrupt,
)
from labkit.views.background import BackgroundJob
from labkit.views.controls import run_button
from labkit.views.durability import checkpoints_html
from labkit.views.given_values import given_value
from labkit.views.interrupt_text import interrupt_columns, interrupt_rows, outcome_words
from labkit.views.tables import grid_html, headers, outcome_badge, outcome_word

__all__ = [
    "InterruptPanel",
    "declined_resume_text",
    "interrupt_html",
    "show_interrupt",
    "show_interrupt_table",
    "show_ticket_answers",
    "ticket_answers_html",
]

INTERRUPT_KEYS = (  # the figures of run_interrupt's result that the views read
    *("key", "layout", "cross_process", "kill_at", "node_calls", "before_resume"),
    *("after_resume", "receipts", "exits", "tickets"),
)
RESULT = "interrupt_result"  # a code of cli.expected
ANSWER_COLUMNS = ("tenant", "key", "body", "ticket_id", "answer")


def verdict(result: dict) -> str:
    """One ticket is the consistent outcome; more are duplicates, none is lost; a failed process,
    no outcome."""
    if result.get("failure"):
        return outcome_badge(FAILED, result["failure"])
    return outcome_word(result["outcome"], outcome_words(result))  # consistent, duplicate, lost


def resumed_how(how: list[str]) -> str:
    """How the resuming process resumed (the worker's list): its calls as code, joined by the
    reader's "then"; NOTHING_SAVED, a code, in the reader's words."""
    nothing_saved = say("interrupt_resume.nothing_saved")
    steps = [nothing_saved if step == NOTHING_SAVED else step for step in how]
    return joined(say("interrupt_resume.then"), steps)


def refusal(answer: TicketAnswer) -> str:
    """Why the ticket service refused a request, from its code: a key the entry point never
    issued, or a key that already holds another payload (the two payloads quoted as held)."""
    fields = {k: v for k, v in answer.refused.items() if k != "code"}
    pair = f"{answer.tenant}/{answer.key}"
    why = say(f"interrupt_resume.{answer.refused['code']}", pair=pair, **fields)
    return say("interrupt_resume.refused", why=why)


def nothing() -> list[tuple[str, ...]]:
    """An empty ticket table's one row."""
    return [(say("common.nothing"),) * 4]


def table_html(results: Sequence[dict]) -> str:
    """Study 001's table: node runs, tickets before and after the resume, receipts."""
    return grid_html(interrupt_columns(), interrupt_rows(results))


def interrupt_html(result: dict) -> str:
    """One run: the verdict, the figures, the ticket rows, and what the resuming process saw."""
    parts = [
        f"<p>{verdict(result)}</p>",
        table_html([result]),
        "<p><b>tickets.db · ticket</b></p>",
        grid_html(("id", "tenant", "op_key", "payload"), result["tickets"] or nothing()),
    ]
    resume = result.get("recover") or result.get("resume") or {}
    if resume.get("found"):
        found = resume["found"]
        # each pending interrupt's value as the graph gave it, not a list of their reprs
        interrupts = say("facts.list_separator").join(map(given_value, found["interrupts"]))
        interrupts = interrupts or say("common.nothing")
        said = say(
            "interrupt_resume.resumed",
            next=f"<code>next={found['next']}</code>",
            interrupts=f"<code>{escape(interrupts)}</code>",
            how=f"<code>{escape(resumed_how(resume['resumed_how']))}</code>",
        )
        parts.append(f"<p>{said}</p>")
        parts.append(checkpoints_html(resume["checkpoints"]))
    return "".join(parts)


def declined_resume_text(layout: str, tickets: int, node_runs: int) -> str:
    """What resuming with approval=False left in one layout: the tickets and the node's runs."""
    return say(
        "interrupt_resume.lines.declined", layout=layout, tickets=tickets, node_runs=node_runs
    )


def show_interrupt(result: dict) -> None:
    """One run of study 001: its verdict, figures, tickets and checkpoint file."""
    check_record("result", result, INTERRUPT_KEYS, RESULT)
    display(HTML(interrupt_html(result)))


def show_interrupt_table(results: Sequence[dict]) -> None:
    """Study 001's table, one line per run."""
    for result in check_items("results", results, dict, "interrupt_results"):
        check_record("each result", result, INTERRUPT_KEYS, RESULT)
    display(HTML(table_html(results)))


def ticket_answers_html(answers: Sequence[TicketAnswer], tickets: Sequence[Sequence]) -> str:
    """What the ticket service answered to each request, then the tickets it holds."""
    rows = [
        (
            a.tenant,
            a.key,
            a.body,
            a.ticket_id or "—",
            refusal(a) if a.refused else say("interrupt_resume.ok"),
        )
        for a in answers
    ]
    return (
        grid_html(headers("interrupt_resume.column", ANSWER_COLUMNS), rows)
        + "<p><b>tickets.db · ticket</b></p>"
        + grid_html(
            ("id", "tenant", "op_key", say("interrupt_resume.column.payload")), tickets or nothing()
        )
    )


def show_ticket_answers(answers: Sequence[TicketAnswer], tickets: Sequence[Sequence]) -> None:
    """The two things ask_ticket_service returns: its answers, and the tickets it holds."""
    check_items("answers", answers, TicketAnswer, "ticket_answers")
    check_items("tickets", tickets, list, "ticket_rows")
    display(HTML(ticket_answers_html(answers, tickets)))


class InterruptPanel(widgets.VBox):
    """Key strategy, layout, same or new process, kill point; Run; the tickets and checkpoints."""

    def __init__(self) -> None:
        self.result: dict | None = None
        self.error: Exception | None = None
        self.key = widgets.ToggleButtons(
            options=list(KEY_STRATEGIES), description=say("interrupt_resume.panel.key")
        )
        self.layout_choice = widgets.ToggleButtons(
            options=list(LAYOUTS), description=say("interrupt_resume.panel.layout")
        )
        self.process = widgets.ToggleButtons(
            options=[  # the value: resume in a new process (cross_process)
                (say("text.interrupt.same_process"), False),
                (say("text.interrupt.new_process"), True),
            ],
            description=say("interrupt_resume.panel.resume_in"),
        )
        self.kill_at = widgets.Dropdown(
            options=list(INTERRUPT_KILL_POINTS),
            description=say("interrupt_resume.panel.kill_at"),
            disabled=True,
        )
        self.run_button = run_button(say("interrupt_resume.panel.run"))
        self.status = widgets.HTML()
        self.error_line = widgets.HTML()
        self.output = widgets.HTML()
        unit = say("interrupt_resume.panel.unit")
        self.job = BackgroundJob(self, [self.run_button], unit=unit)  # off the kernel's thread
        self.process.observe(self._on_process, names="value")
        self.run_button.on_click(self._on_run)
        super().__init__(
            [
                self.key,
                self.layout_choice,
                self.process,
                widgets.HBox([self.kill_at, self.run_button]),
                self.status,
                self.job.row,
                self.error_line,
                self.output,
            ]
        )

    def _on_process(self, change: dict) -> None:
        """A kill needs a fresh process to resume: the kill point opens with "new process"."""
        self.kill_at.disabled = not change["new"]
        if self.kill_at.disabled:
            self.kill_at.value = "none"

    def _on_run(self, _button: object = None) -> None:
        key, layout, kill_at = self.key.value, self.layout_choice.value, self.kill_at.value
        cross = self.process.value
        running = "running_new" if cross else "running_same"
        self.job.start(
            say(f"interrupt_resume.panel.{running}", key=f"<b>{key}</b>", layout=layout),
            lambda _report: run_interrupt(key, layout, cross, kill_at),
            self.show,
        )

    def show(self, result: dict) -> None:
        self.result = result
        self.output.value = interrupt_html(result)

    def click(self) -> None:
        """Same as clicking Run: the run goes on after it returns (`self.job.wait()`)."""
        self.run_button.click()
