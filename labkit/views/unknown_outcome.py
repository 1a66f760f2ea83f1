"""Lesson 5's views: what the caller saw (the Jepsen column) beside what the service's file and
the caller's checkpoint hold, the strategies side by side, the sweep, a timeline with the
caller and service lanes, and a panel. They read `CallResult`s and traces, nothing else."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import ipywidgets as widgets

from labkit.bench.errors import check_items
from labkit.bench.snapshot import Table
from labkit.language import display_width, padded, say
from labkit.language.failures import failure_text
from labkit.studies.unknown_outcome.experiment import CallResult, check_result, run_call
from labkit.studies.unknown_outcome.outcome import JEPSEN_TYPES, OUTCOMES
from labkit.studies.unknown_outcome.spec import FAULTS, STRATEGIES
from labkit.views import show_html
from labkit.views.background import BackgroundJob
from labkit.views.call_text import call_columns, call_outcome_name, call_rows, call_status
from labkit.views.call_timeline import timeline_figure
from labkit.views.controls import pick_one, run_button
from labkit.views.figures import figure_png, picture, show_picture
from labkit.views.palette import NEUTRAL, OUTCOME_COLOURS
from labkit.views.tables import CELL, grid_html, table_html
from labkit.views.text import counted

__all__ = [
    "CallPanel",
    "call_html",
    "call_sweep_html",
    "faults_and_strategies",
    "show_call",
    "show_call_sweep",
    "show_call_timeline",
    "show_calls",
    "strategies_html",
    "strategy_outcomes",
    "timeline_figure",
]

COLOURS = {  # Okabe-Ito, as every outcome of the lab; the word always goes with it
    **OUTCOME_COLOURS,
    "unknown-resolved": "#56B4E9",  # sky blue
    "orphan": "#E69F00",  # orange
    "unresolved": "#000000",
}
RESULTS = "call_results"  # a code of cli.expected


def faults_and_strategies() -> str:
    """Every fault and every strategy, a line each with what it does: the lesson's menu (the
    names stay codes, as run_call and the panel take them)."""
    kinds = {
        say("unknown_outcome.panel.fault"): FAULTS,
        say("unknown_outcome.panel.strategy"): STRATEGIES,
    }
    width = max(map(display_width, kinds))
    return "\n".join(
        f"{padded(kind, width)} {name:15} {what}"
        for kind, table in kinds.items()
        for name, what in table.items()
    )


def badge(outcome: str) -> str:
    colour = COLOURS.get(outcome, NEUTRAL)
    return (
        f'<span style="background:{colour};color:white;padding:2px 8px;border-radius:4px;'
        f'font-weight:bold;white-space:nowrap">{escape(call_outcome_name(outcome).upper())}</span>'
    )


def outcome_line(result: CallResult) -> str:
    why = ""
    if result.failure:
        said = escape(failure_text(result.failure))
        why = f"<br><b>{say('unknown_outcome.view.why')}</b> <code>{said}</code>"
    return f"<p>{badge(result.outcome)} {escape(OUTCOMES[result.outcome])}{why}</p>"


def jepsen_table(result: CallResult) -> Table:
    rows = [[op["process"], op["f"], op["key"], op["type"], op["value"]] for op in result.ops]
    return Table(["process", "f", "key", "jepsen", "value"], rows)


def tickets_text(count: int) -> str:
    return say(
        "unknown_outcome.view.ticket" if count == 1 else "unknown_outcome.view.tickets", count=count
    )


def call_html(result: CallResult) -> str:
    """The outcome, then the Jepsen column beside the service's tickets and the checkpoint."""
    ticket_table = Table(["id", "tenant", "op_key", "payload"], result.tickets)
    checkpoint = Table(["op_key", "title", "status", "ticket"], result.checkpoint)
    parts = [
        table_html(say("unknown_outcome.view.caller_saw"), jepsen_table(result)),
        table_html(say("unknown_outcome.view.service_holds", tenant=result.tenant), ticket_table),
        table_html(say("unknown_outcome.view.workflow_believes"), checkpoint),
    ]
    legend = "; ".join(f"<b>{k}</b>: {escape(v)}" for k, v in JEPSEN_TYPES.items())
    return (
        outcome_line(result)
        + f'<div style="display:flex;flex-wrap:wrap">{"".join(parts)}</div>'
        + f"<small>{legend}</small>"
    )


def strategies_html(results: Sequence[CallResult]) -> str:
    """One row per call: strategy, fault, the Jepsen column, tickets, checkpoint, outcome."""
    words = [
        badge(r.outcome)
        + (f"<br><small>{escape(failure_text(r.failure))}</small>" if r.failure else "")
        for r in results
    ]
    return grid_html(call_columns(), call_rows(results), words) + legend_html(results)


def call_sweep_html(results: Sequence[CallResult]) -> str:
    """The sweep as a matrix: strategies down, faults across; each cell its word and counts."""
    cells = {(r.spec.strategy, r.spec.fault): r for r in results}
    strategies = [s for s in STRATEGIES if any(k[0] == s for k in cells)]
    faults = [f for f in FAULTS if any(k[1] == f for k in cells)]
    head = "".join(f'<th style="{CELL}">{escape(f)}</th>' for f in faults)
    rows = ""
    for strategy in strategies:
        row = f'<th style="{CELL}">{escape(strategy)}</th>'
        for fault in faults:
            r = cells.get((strategy, fault))
            text = (
                f"{badge(r.outcome)}<br><small>{tickets_text(len(r.tickets))} · "
                f"{escape(call_status(r.status))}</small>"
                if r
                else ""
            )
            row += f'<td style="{CELL}">{text}</td>'
        rows += f"<tr>{row}</tr>"
    return (
        f'<table style="border-collapse:collapse"><tr>'
        f'<th style="{CELL}">{escape(say("unknown_outcome.view.strategy_fault"))}</th>{head}</tr>'
        f"{rows}</table>{legend_html(results)}"
    )


def legend_html(results: Sequence[CallResult]) -> str:
    """Each outcome word the calls got, on its colour, with what it means."""
    seen = dict.fromkeys(r.outcome for r in results)
    meaning = "".join(f"<li>{badge(w)} {escape(OUTCOMES[w])}</li>" for w in seen)
    return f'<ul style="list-style:none;padding-left:0">{meaning}</ul>'


def show_call(result: CallResult) -> None:
    """The outcome, the Jepsen column beside the service's tickets and the checkpoint."""
    show_html(call_html(check_result(result)))


def show_calls(results: Sequence[CallResult]) -> None:
    """Calls side by side, one row each (the four strategies under one fault, say)."""
    show_html(strategies_html(check_items("results", results, CallResult, RESULTS)))


def show_call_sweep(results: Sequence[CallResult]) -> None:
    """Every strategy under every fault, as a matrix of outcome words."""
    show_html(call_sweep_html(check_items("results", results, CallResult, RESULTS)))


def show_call_timeline(result: CallResult) -> None:
    """The call's timeline: the caller, the recovering caller and the service."""
    from IPython.display import Image, display

    display(Image(figure_png(timeline_figure(check_result(result)))))


class CallPanel(widgets.VBox):
    """Strategy, fault, Run: then the outcome, the Jepsen column beside the service's file
    and the checkpoint, and the timeline. Runs start on a click only, and run off the kernel's
    thread (`background.BackgroundJob`)."""

    def __init__(self, strategy: str = "reconcile", fault: str = "reply_lost") -> None:
        self.result: CallResult | None = None
        self.error: Exception | None = None
        self.strategy = pick_one(say("unknown_outcome.panel.strategy"), STRATEGIES, strategy)
        self.fault = pick_one(say("unknown_outcome.panel.fault"), FAULTS, fault)
        self.run_button = run_button(say("unknown_outcome.panel.run"))
        self.status = widgets.HTML(say("unknown_outcome.panel.pick"))
        self.error_line = widgets.HTML()
        self.tables = widgets.HTML()
        self.image = picture()
        self.job = BackgroundJob(self, [self.run_button], unit=say("unknown_outcome.panel.unit"))
        self.run_button.on_click(self._on_run)
        controls = widgets.HBox([self.strategy, self.fault, self.run_button])
        feedback = [self.status, self.job.row, self.error_line]
        super().__init__([controls, *feedback, self.tables, self.image])
        self.add_class("labkit-call-panel")

    def _on_run(self, _button: widgets.Button | None = None) -> None:
        strategy, fault = self.strategy.value, self.fault.value
        what = say(
            "unknown_outcome.panel.running",
            strategy=strategy,
            fault=fault,
            meaning=escape(FAULTS[fault]),
        )
        self.job.start(what, lambda _report: run_call(strategy, fault), self.show)

    def show(self, result: CallResult) -> None:
        self.result = result
        self.status.value = say("unknown_outcome.panel.done", folder=escape(str(result.run_dir)))
        self.tables.value = call_html(result)
        show_picture(self.image, timeline_figure(result))

    def click(self) -> None:
        """Same as clicking Run (for scripts and tests): the call goes on after it returns;
        `self.job.wait()` waits for it."""
        self.run_button.click()


def call_outcome_counts(results: Sequence[CallResult]) -> str:
    """How many calls of a sweep ended each way, in the reader's words."""
    results = check_items("results", results, CallResult, RESULTS)
    return counted(call_outcome_name(r.outcome) for r in results)


def strategy_outcomes(results: Sequence[CallResult]) -> str:
    """Each call a line, "new_key: 2 tickets, intent done: duplicate", in the reader's words:
    what the prose below the table reads of each strategy."""
    return "\n".join(
        say(
            "unknown_outcome.view.strategy_outcome",
            strategy=r.spec.strategy,
            tickets=tickets_text(len(r.tickets)),
            status=call_status(r.status),
            outcome=call_outcome_name(r.outcome),
        )
        for r in check_items("results", results, CallResult, RESULTS)
    )
