"""Lesson 6's views: what a race left (the task row, the receiver's applied and refused writes,
the outcome in words), the sweep as a matrix, the LangGraph resumers and their forked
checkpoint chain, a timeline with a lane per worker (each lease a bar to its expiry, the pause
shaded), and a panel. Text for the terminal (`format_*`), HTML for a notebook (`*_html`);
matplotlib and ipywidgets are loaded only where a figure or the panel is made, so the command
line never pays for them. They read results and traces, nothing else."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

from labkit.bench.errors import check_items, check_record
from labkit.language import say
from labkit.studies.leases.experiment import ClaimResult, check_result, run_claim
from labkit.studies.leases.outcome import OUTCOMES
from labkit.studies.leases.spec import METHODS, ClaimSpec
from labkit.views import show_html
from labkit.views.figures import figure_png, picture, show_picture
from labkit.views.lanes_drawing import draw
from labkit.views.lease_timeline import claim_timeline
from labkit.views.palette import NEUTRAL
from labkit.views.tables import CELL, grid_html, snapshot_html
from labkit.views.text import format_grid, format_snapshot, how_it_ended, process_exits

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn, not here
    from matplotlib.figure import Figure

__all__ = [
    "CLAIM_COLUMNS",
    "LeasePanel",
    "claim_html",
    "claim_rows",
    "claim_sweep_html",
    "format_claim",
    "format_claim_sweep",
    "format_graph_race",
    "graph_race_html",
    "refusal_text",
    "show_claim",
    "show_claim_sweep",
    "show_claim_timeline",
    "show_graph_race",
    "timeline_figure",
]

COLOURS = {  # Okabe-Ito; the word always goes with the colour
    "one_winner": "#009E73",
    "both_ran": "#D55E00",
    "lost_update": "#0072B2",
    "refused_late_write": "#56B4E9",
    "nobody": "#E69F00",
    "failed": "#CC79A7",
}
RACE_COLUMNS = ("w1", "w2", "applied", "refused", "document")  # what one race did
CLAIM_COLUMNS = ("method", "pause", "lease", *RACE_COLUMNS)  # and under which schedule
RESULTS = "a list of ClaimResult (what sweep_claims returns)"
GRAPH_RESULT = "the dict run_graph_race returns"


def said(outcome: str) -> str:
    """An outcome code as the reader reads it: "both ran" (两个都执行了 in Chinese)."""
    return say(f"leases.name.{outcome}")


def columns(*names: str) -> list[str]:
    """The headers of CLAIM_COLUMNS (and more), in the reader's language."""
    return [say(f"leases.columns.{name}") for name in names]


def worker_text(report: dict, exit_code: int | None = None) -> str:
    """What one worker did, in a few words: its claim's token, its write, its done mark; or
    how it ended, when it was killed before it could say (`exit_code`)."""
    if not report:
        killed = exit_code is not None and exit_code < 0
        return how_it_ended(exit_code) if killed else say("leases.worker.no_report")
    if not report.get("claimed"):
        return say("leases.worker.claim_refused")
    text = say("leases.worker.token", fence=report["fence"])
    if report.get("renewed") is False:
        return text + say("leases.worker.gave_up")
    if "applied" in report:
        text += say(
            "leases.worker.write_applied" if report["applied"] else "leases.worker.write_refused"
        )
        text += say("leases.worker.done" if report.get("done") else "leases.worker.not_done")
    return text


def claim_rows(results: Sequence[ClaimResult]) -> list[tuple]:
    """One row per race under CLAIM_COLUMNS, for text and HTML alike."""
    rows = []
    for r in results:
        schedule = (
            r.spec.method,
            say("leases.race.ms", ms=r.spec.pause_ms),
            say("leases.race.ms", ms=r.spec.lease_ms),
        )
        rows.append((*schedule, *race_row(r)))
    return rows


def race_row(r: ClaimResult) -> tuple:
    """What a race did, under RACE_COLUMNS: each worker, the writes, the document's author."""
    document = r.after.table("document").rows[0]
    exits = r.summary()["exits"]
    return (
        worker_text(r.reports.get("w1", {}), exits.get("w1")),
        worker_text(r.reports.get("w2", {}), exits.get("w2")),
        r.counts["applied"],
        r.counts["refused"],
        say("leases.race.document", worker=document[2], fence=document[3]),
    )


def legend_lines(words: Sequence[str]) -> list[str]:
    return [f"  {said(w)}: {OUTCOMES[w]}" for w in dict.fromkeys(words)]


def schedule(r: ClaimResult, key: str = "schedule") -> str:
    """When w1 claims and is frozen, and when w2 arrives."""
    return say(
        f"leases.race.{key}",
        lease=r.spec.lease_ms,
        stop=r.stop_at if key == "schedule_html" else repr(r.stop_at),
        pause=r.spec.pause_ms,
        arrival=r.spec.arrival_ms,
    )


def outcome_text(outcome: str) -> str:
    return say("leases.race.outcome", word=said(outcome).upper(), meaning=OUTCOMES[outcome])


def refusal_text(writer: str, token: int, highest: int) -> str:
    """A refused write in one sentence, from a row of the receiver's `refused` log: who came
    back with which token, and the highest token the receiver had accepted by then."""
    return say("leases.race.refused_write", writer=writer, token=token, highest=highest)


def format_claim(result: ClaimResult) -> str:
    """One race: the schedule, how each worker ended, the outcome, the files."""
    r = check_result(result)
    lines = [
        method_line(r.spec.method),
        f"  {schedule(r)}",
        f"  {say('leases.race.processes', exits=process_exits(r.summary()['exits']))}",
        f"  {outcome_text(r.outcome)}",
        *([f"  {say('leases.race.why', failure=r.failure)}"] if r.failure else []),
        f"  {say('leases.race.run_folder', folder=r.run_dir)}",
        "",
        format_grid(columns(*RACE_COLUMNS), [race_row(r)]),  # the schedule is said above
    ]
    at_end = say("leases.race.files_at_end")
    return "\n".join(lines) + f"\n\n{at_end}\n\n" + format_snapshot(r.after)


def method_line(method: str) -> str:
    """A claim method and what it does, wrapped to a terminal's 100 columns."""
    return textwrap.fill(f"{method}: {METHODS[method]}", width=100, subsequent_indent="  ")


def format_claim_sweep(results: Sequence[ClaimResult]) -> str:
    """Every race of a sweep, one line each with its word, and what each word means."""
    results = check_items("results", results, ClaimResult, RESULTS)
    rows = [(*row, said(r.outcome)) for r, row in zip(results, claim_rows(results), strict=True)]
    table = format_grid(columns(*CLAIM_COLUMNS, "outcome"), rows)
    legend = "\n".join(legend_lines([r.outcome for r in results]))
    return f"{table}\n\n{say('leases.race.outcomes')}\n{legend}"


def badge(outcome: str) -> str:
    return (
        f'<span style="background:{COLOURS.get(outcome, NEUTRAL)};color:white;padding:2px 8px;'
        f'border-radius:4px;font-weight:bold">{escape(said(outcome).upper())}</span>'
    )


def outcome_html(outcome: str, failure: str | None) -> str:
    why = ""
    if failure:
        why = f"<br><b>{say('leases.race.why_html')}</b> <code>{escape(failure)}</code>"
    return f"<p>{badge(outcome)} {escape(OUTCOMES[outcome])}{why}</p>"


def claim_html(result: ClaimResult) -> str:
    """A race: the outcome in words, its row, then every table of both files."""
    r = check_result(result)
    exits = escape(process_exits(r.summary()["exits"]))
    folder = say("leases.race.run_folder_html", folder=escape(str(r.run_dir)))
    return (
        f"<div><p><b>{r.spec.method}</b>: {escape(METHODS[r.spec.method])}<br>"
        f"{schedule(r, 'schedule_html')}<br>{say('leases.race.processes_html', exits=exits)}</p>"
        f"{outcome_html(r.outcome, r.failure)}"
        f"{grid_html(columns(*CLAIM_COLUMNS), claim_rows([r]))}{snapshot_html(r.after)}"
        f"<p style='color:#555'>{folder}</p></div>"
    )


def claim_sweep_html(results: Sequence[ClaimResult]) -> str:
    """The sweep as a matrix: methods down, pause × lease across, the outcome word in each."""
    results = check_items("results", results, ClaimResult, RESULTS)
    pairs = list(dict.fromkeys((r.spec.pause_ms, r.spec.lease_ms) for r in results))
    cells = {(r.spec.method, r.spec.pause_ms, r.spec.lease_ms): r for r in results}
    head = "".join(
        f'<th style="{CELL}">{say("leases.race.column", pause=p, lease=le)}</th>' for p, le in pairs
    )
    body = ""
    for method in [m for m in METHODS if any(k[0] == m for k in cells)]:
        row = f'<th style="{CELL}">{escape(method)}</th>'
        for pause, lease in pairs:
            r = cells.get((method, pause, lease))
            text = ""
            if r:
                text = (
                    f"{badge(r.outcome)}<br><small>{say('leases.race.counts', **r.counts)}</small>"
                )
            row += f'<td style="{CELL}">{text}</td>'
        body += f"<tr>{row}</tr>"
    meaning = "".join(
        f"<li>{badge(w)} {escape(OUTCOMES[w])}</li>"
        for w in dict.fromkeys(r.outcome for r in results)
    )
    return (
        f'<table style="border-collapse:collapse"><tr><th style="{CELL}">'
        f"{say('leases.columns.method')}</th>{head}</tr>"
        f'{body}</table><ul style="list-style:none;padding-left:0">{meaning}</ul>'
    )


# --- the LangGraph race ---------------------------------------------------------------------


def short(checkpoint: dict) -> str:
    """A checkpoint id's last 8 characters: enough to tell the checkpoints of a thread apart."""
    return checkpoint["checkpoint_id"][-8:]


def checkpoint_lines(checkpoints: list[dict]) -> list[str]:
    """The thread's checkpoints as a tree (children under their parent): a fork is a parent
    with two children."""
    children: dict[str | None, list[dict]] = {}
    for checkpoint in sorted(checkpoints, key=lambda c: c["checkpoint_id"]):
        children.setdefault(checkpoint["parent"], []).append(checkpoint)
    lines: list[str] = []

    def walk(parent: str | None, depth: int) -> None:
        kids = children.get(parent, [])
        for n, checkpoint in enumerate(kids, 1):
            fork = say("leases.graph.fork", n=n, count=len(kids)) if len(kids) > 1 else ""
            interrupts = checkpoint["interrupts"]
            waits = say("leases.graph.interrupt", value=interrupts[0]) if interrupts else ""
            line = say(
                "leases.graph.checkpoint",
                step=checkpoint["step"],
                id=short(checkpoint),
                next=checkpoint["next"] or say("leases.graph.finished"),
                waits=waits,
                fork=fork,
            )
            lines.append(f"{'  ' * depth}{line}")
            walk(checkpoint["checkpoint_id"], depth + 1)

    walk(None, 0)
    return lines


def token_text(fence: int) -> str:
    """A publish's token; 0 is none (the resumer claimed nothing)."""
    return say("leases.graph.token", fence=fence) if fence else say("leases.graph.no_token")


def resumer_text(role: str, resumer: dict) -> str:
    if resumer.get("error"):
        return say("leases.graph.died", role=role, error=resumer["error"])
    if resumer.get("ran") is False:
        return say("leases.graph.not_resumed", role=role)
    token = say("leases.graph.with_token", fence=resumer["fence"]) if resumer.get("claimed") else ""
    return say("leases.graph.resumed", role=role, token=token, next=resumer.get("found_next"))


def format_graph_race(run: dict) -> str:
    """Two resumers of one thread: what each ran, the publish runs, the checkpoint tree."""
    from labkit.studies.leases.resume import GRAPH_CASES

    run = check_record("run", run, ("case", "resumers", "checkpoints"), GRAPH_RESULT)
    publishes = [
        say(
            "leases.graph.publish",
            role=line["role"],
            token=token_text(line["fence"]),
            what=say("leases.graph.applied" if line["applied"] else "leases.graph.refused"),
        )
        for line in run["publish_runs"]
    ]
    ran = say(
        "leases.graph.publish_ran_once" if len(publishes) == 1 else "leases.graph.publish_ran",
        count=len(publishes),
        runs="; ".join(publishes) or say("leases.graph.never"),
    )
    return "\n".join(
        [
            f"{run['case']}: {GRAPH_CASES[run['case']]}",
            *(f"  {resumer_text(role, r)}" for role, r in run["resumers"].items()),
            f"  {ran}",
            f"  {outcome_text(run['outcome'])}",
            *([f"  {say('leases.race.why', failure=run['failure'])}"] if run["failure"] else []),
            f"  {say('leases.graph.forks' if run['forks'] else 'leases.graph.no_fork')}",
            *(f"    {line}" for line in checkpoint_lines(run["checkpoints"])),
            f"  {say('leases.race.run_folder', folder=run['run_dir'])}",
        ]
    )


def graph_race_html(run: dict) -> str:
    """The same as `format_graph_race`, for a notebook."""
    text = escape(format_graph_race(run))
    return f"{outcome_html(run['outcome'], run['failure'])}<pre>{text}</pre>"


# --- the timeline ---------------------------------------------------------------------------


def timeline_figure(result: ClaimResult) -> Figure:
    """The race's timeline (`lease_timeline`), under its method and outcome."""
    r = check_result(result)
    return draw(claim_timeline(r, f"{r.spec.method}: {said(r.outcome)}"))[0]


# --- in a notebook --------------------------------------------------------------------------


def show_claim(result: ClaimResult) -> None:
    """A race: the outcome in words, its row, both files."""
    show_html(claim_html(result))


def show_claim_sweep(results: Sequence[ClaimResult]) -> None:
    """Every method × pause × lease as a matrix of outcome words."""
    show_html(claim_sweep_html(results))


def show_claim_timeline(result: ClaimResult) -> None:
    """The race's timeline: a lane per worker, the leases and the pause on the lab's clock."""
    from IPython.display import Image, display

    display(Image(figure_png(timeline_figure(check_result(result)))))


def show_graph_race(run: dict) -> None:
    """Two resumers of one LangGraph thread: what each ran, the checkpoint tree."""
    show_html(graph_race_html(run))


class LeasePanel:
    """Method, pause, lease, Run: then the outcome, the files and the timeline. A run starts on
    a click only, and runs off the kernel's thread (`background.BackgroundJob`: the race holds
    w1 frozen for its pause). Display it as the last line of a cell (it shows its widgets)."""

    def __init__(self, method: str = "lease_with_fence", pause_ms: int = 300, lease_ms: int = 200):
        import ipywidgets as widgets

        from labkit.views.background import BackgroundJob

        ClaimSpec(method, pause_ms, lease_ms)  # bad input: one line, before any widget
        self.result: ClaimResult | None = None
        self.error: Exception | None = None
        self.method = widgets.Dropdown(
            options=list(METHODS), value=method, description=say("leases.panel.method")
        )
        slider = {"min": 0, "max": 600, "step": 50, "continuous_update": False}
        self.pause = widgets.IntSlider(
            value=pause_ms, description=say("leases.panel.pause"), **slider
        )
        self.lease = widgets.IntSlider(
            value=lease_ms, description=say("leases.panel.lease"), **{**slider, "min": 50}
        )
        self.run_button = widgets.Button(
            description=say("leases.panel.run"), button_style="primary", icon="play"
        )
        self.status = widgets.HTML(say("leases.panel.pick"))
        self.error_line = widgets.HTML()
        self.tables = widgets.HTML()
        self.image = picture()
        self.job = BackgroundJob(self, [self.run_button], unit=say("leases.panel.unit"))
        self.run_button.on_click(self._on_run)
        controls = widgets.HBox([self.method, self.pause, self.lease, self.run_button])
        feedback = [self.status, self.job.row, self.error_line]
        self.box = widgets.VBox([controls, *feedback, self.tables, self.image])
        self.box.add_class("labkit-lease-panel")

    def _on_run(self, _button: object = None) -> None:
        method, pause, lease = self.method.value, self.pause.value, self.lease.value
        what = say("leases.panel.running", method=method, pause=pause, lease=lease)
        self.job.start(what, lambda _report: run_claim(method, pause, lease), self.show)

    def show(self, result: ClaimResult) -> None:
        self.result = result
        self.status.value = say("leases.panel.done", folder=escape(str(result.run_dir)))
        self.tables.value = claim_html(result)
        show_picture(self.image, timeline_figure(result))

    def click(self) -> None:
        """Same as clicking Run (for scripts and tests): the race goes on after it returns;
        `self.job.wait()` waits for it."""
        self.run_button.click()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.box)
