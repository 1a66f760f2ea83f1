"""Lesson 6's views: what a race left (the task row, the receiver's applied and refused writes,
the outcome in words), the sweep as a matrix, the LangGraph resumers and their forked
checkpoint chain, a timeline with a lane per worker (each lease a bar to its expiry, the pause
shaded), and a panel. Text for the terminal (`format_*`), HTML for a notebook (`*_html`);
matplotlib and ipywidgets are loaded only where a figure or the panel is made, so the command
line never pays for them. They read results and traces, nothing else."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

from labkit.bench.errors import check_items, check_record
from labkit.studies.leases.experiment import ClaimResult, check_result, run_claim
from labkit.studies.leases.outcome import OUTCOMES
from labkit.studies.leases.spec import METHODS, ClaimSpec
from labkit.views import show_html
from labkit.views.figures import figure_png
from labkit.views.palette import KILL_COLOUR, NEUTRAL
from labkit.views.tables import CELL, grid_html, snapshot_html
from labkit.views.text import format_grid, format_snapshot, process_exits

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
LANE_COLOURS = {"w1": "#E69F00", "w2": "#009E73"}
CLAIM_COLUMNS = ("method", "pause", "lease", "w1", "w2", "applied", "refused", "document")
RESULTS = "a list of ClaimResult (what sweep_claims returns)"
GRAPH_RESULT = "the dict run_graph_race returns"


def said(word: str) -> str:
    return word.replace("_", " ")


def worker_text(report: dict) -> str:
    """What one worker did, in a few words: its claim's token, its write, its done mark."""
    if not report:
        return "no report (killed?)"
    if not report.get("claimed"):
        return "claim refused"
    text = f"token {report['fence']}"
    if report.get("renewed") is False:
        return text + ", renewal failed: gave up"
    if "applied" in report:
        text += ", write " + ("applied" if report["applied"] else "REFUSED")
        text += ", done" if report.get("done") else ", not done"
    return text


def claim_rows(results: Sequence[ClaimResult]) -> list[tuple]:
    """One row per race under CLAIM_COLUMNS, for text and HTML alike."""
    rows = []
    for r in results:
        document = r.after.table("document").rows[0]
        rows.append(
            (
                r.spec.method,
                f"{r.spec.pause_ms} ms",
                f"{r.spec.lease_ms} ms",
                worker_text(r.reports.get("w1", {})),
                worker_text(r.reports.get("w2", {})),
                r.counts["applied"],
                r.counts["refused"],
                f"by {document[2]} under token {document[3]}",
            )
        )
    return rows


def legend_lines(words: Sequence[str]) -> list[str]:
    return [f"  {said(w)}: {OUTCOMES[w]}" for w in dict.fromkeys(words)]


def format_claim(result: ClaimResult) -> str:
    """One race: the schedule, how each worker ended, the outcome, the files."""
    r = check_result(result)
    lines = [
        f"{r.spec.method}: {METHODS[r.spec.method]}",
        f"  w1 claims at 0 ms (lease {r.spec.lease_ms} ms) and is frozen at {r.stop_at!r} for "
        f"{r.spec.pause_ms} ms; w2 arrives at {r.spec.arrival_ms} ms",
        f"  processes: {process_exits(r.summary()['exits'])}",
        f"  outcome: {said(r.outcome).upper()}: {OUTCOMES[r.outcome]}",
        *([f"  why: {r.failure}"] if r.failure else []),
        f"  run folder: {r.run_dir}",
        "",
        format_grid(CLAIM_COLUMNS, claim_rows([r])),
    ]
    return "\n".join(lines) + "\n\nThe files at the end:\n\n" + format_snapshot(r.after)


def format_claim_sweep(results: Sequence[ClaimResult]) -> str:
    """Every race of a sweep, one line each with its word, and what each word means."""
    results = check_items("results", results, ClaimResult, RESULTS)
    rows = [(*row, said(r.outcome)) for r, row in zip(results, claim_rows(results), strict=True)]
    table = format_grid((*CLAIM_COLUMNS, "outcome"), rows)
    return table + "\n\nOutcomes:\n" + "\n".join(legend_lines([r.outcome for r in results]))


def badge(outcome: str) -> str:
    return (
        f'<span style="background:{COLOURS.get(outcome, NEUTRAL)};color:white;padding:2px 8px;'
        f'border-radius:4px;font-weight:bold">{escape(said(outcome).upper())}</span>'
    )


def outcome_html(outcome: str, failure: str | None) -> str:
    why = f"<br><b>Why:</b> <code>{escape(failure)}</code>" if failure else ""
    return f"<p>{badge(outcome)} {escape(OUTCOMES[outcome])}{why}</p>"


def claim_html(result: ClaimResult) -> str:
    """A race: the outcome in words, its row, then every table of both files."""
    r = check_result(result)
    schedule = (
        f"w1 claims at 0 ms (lease {r.spec.lease_ms} ms), is frozen at <b>{r.stop_at}</b> for "
        f"{r.spec.pause_ms} ms; w2 arrives at {r.spec.arrival_ms} ms"
    )
    return (
        f"<div><p><b>{r.spec.method}</b>: {escape(METHODS[r.spec.method])}<br>{schedule}<br>"
        f"Processes: {escape(process_exits(r.summary()['exits']))}</p>"
        f"{outcome_html(r.outcome, r.failure)}{grid_html(CLAIM_COLUMNS, claim_rows([r]))}"
        f"{snapshot_html(r.after)}"
        f"<p style='color:#555'>Run folder: <code>{escape(str(r.run_dir))}</code></p></div>"
    )


def claim_sweep_html(results: Sequence[ClaimResult]) -> str:
    """The sweep as a matrix: methods down, pause × lease across, the outcome word in each."""
    results = check_items("results", results, ClaimResult, RESULTS)
    columns = list(dict.fromkeys((r.spec.pause_ms, r.spec.lease_ms) for r in results))
    cells = {(r.spec.method, r.spec.pause_ms, r.spec.lease_ms): r for r in results}
    head = "".join(f'<th style="{CELL}">pause {p} ms<br>lease {le} ms</th>' for p, le in columns)
    body = ""
    for method in [m for m in METHODS if any(k[0] == m for k in cells)]:
        row = f'<th style="{CELL}">{escape(method)}</th>'
        for pause, lease in columns:
            r = cells.get((method, pause, lease))
            text = f"{badge(r.outcome)}<br><small>{r.counts['applied']} applied · " if r else ""
            text += f"{r.counts['refused']} refused</small>" if r else ""
            row += f'<td style="{CELL}">{text}</td>'
        body += f"<tr>{row}</tr>"
    meaning = "".join(
        f"<li>{badge(w)} {escape(OUTCOMES[w])}</li>"
        for w in dict.fromkeys(r.outcome for r in results)
    )
    return (
        f'<table style="border-collapse:collapse"><tr><th style="{CELL}">method</th>{head}</tr>'
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
            fork = f"   ← FORK: child {n} of {len(kids)}" if len(kids) > 1 else ""
            waits = (
                f" (interrupt: {checkpoint['interrupts'][0]})" if checkpoint["interrupts"] else ""
            )
            lines.append(
                f"{'  ' * depth}step {checkpoint['step']} · …{short(checkpoint)}"
                f" · next {checkpoint['next'] or '[] (finished)'}{waits}{fork}"
            )
            walk(checkpoint["checkpoint_id"], depth + 1)

    walk(None, 0)
    return lines


def token_text(fence: int) -> str:
    """A publish's token; 0 is none (the resumer claimed nothing)."""
    return f"token {fence}" if fence else "no token"


def resumer_text(role: str, resumer: dict) -> str:
    if resumer.get("error"):
        return f"{role}: died, {resumer['error']}"
    if resumer.get("ran") is False:
        return f"{role}: claim refused, did not resume"
    token = f" with token {resumer['fence']}" if resumer.get("claimed") else ""
    return f"{role}: resumed{token}, found next={resumer.get('found_next')}"


def format_graph_race(run: dict) -> str:
    """Two resumers of one thread: what each ran, the publish runs, the checkpoint tree."""
    from labkit.studies.leases.resume import GRAPH_CASES

    run = check_record("run", run, ("case", "resumers", "checkpoints"), GRAPH_RESULT)
    publishes = [
        f"{line['role']} ({token_text(line['fence'])}): "
        f"{'applied' if line['applied'] else 'refused'}"
        for line in run["publish_runs"]
    ]
    return "\n".join(
        [
            f"{run['case']}: {GRAPH_CASES[run['case']]}",
            *(f"  {resumer_text(role, r)}" for role, r in run["resumers"].items()),
            f"  publish ran {len(publishes)} time{'s' * (len(publishes) != 1)}: "
            f"{'; '.join(publishes) or 'never'}",
            f"  outcome: {said(run['outcome']).upper()}: {OUTCOMES[run['outcome']]}",
            *([f"  why: {run['failure']}"] if run["failure"] else []),
            f"  the checkpoint chain {'FORKS' if run['forks'] else 'does not fork'}:",
            *(f"    {line}" for line in checkpoint_lines(run["checkpoints"])),
            f"  run folder: {run['run_dir']}",
        ]
    )


def graph_race_html(run: dict) -> str:
    """The same as `format_graph_race`, for a notebook."""
    text = escape(format_graph_race(run))
    return f"{outcome_html(run['outcome'], run['failure'])}<pre>{text}</pre>"


# --- the timeline ---------------------------------------------------------------------------

LANES = {"w1": 2, "w2": 1}


def timeline_figure(result: ClaimResult) -> Figure:
    """A lane per worker on the lab's clock: each won claim's lease as a bar to its expiry
    (a renewal extends it, hatched), the pause shaded, claims, writes and done marks with their
    tokens; events at the same lab time are drawn apart in the order they happened."""
    from matplotlib.figure import Figure

    r = check_result(result)
    events = [e for e in r.trace() if "lab_ms" in e]
    span = max([r.spec.pause_ms, r.spec.arrival_ms + r.spec.lease_ms, 1])
    nudge = span * 0.03
    seen: dict[tuple[str, int], int] = {}

    def placed(event: dict) -> tuple[float, int]:
        """Its x (nudged after the events drawn at the same lab time) and its number there."""
        key = (event["role"], event["lab_ms"])
        n = seen[key] = seen.get(key, -1) + 1
        return event["lab_ms"] + n * nudge, n

    fig = Figure(figsize=(10, 3.6))
    ax = fig.subplots()
    stop = next((e for e in events if e["event"] == "stop"), None)
    cont = next((e for e in events if e["event"] == "cont"), None)
    if stop:
        end = cont["lab_ms"] if cont else span
        ax.axvspan(
            stop["lab_ms"],
            end,
            ymin=0.55,
            ymax=0.95,
            color=NEUTRAL,
            alpha=0.25,
            hatch="..",
            label=f"w1 frozen (SIGSTOP) {end - stop['lab_ms']} ms",
        )
    for e in events:
        if e["role"] == "lab":
            if e["event"] == "clock" and e["lab_ms"] == r.spec.arrival_ms:
                ax.axvline(e["lab_ms"], color="#777777", ls="--", lw=1)
            continue
        y, colour = LANES[e["role"]], LANE_COLOURS[e["role"]]
        if e["event"] == "claim" and e["won"] and r.spec.leased:
            until = e["lab_ms"] + e["lease_ms"]
            ax.barh(y, e["lease_ms"], left=e["lab_ms"], height=0.3, color=colour, alpha=0.35)
            ax.plot([until, until], [y - 0.2, y + 0.2], color=colour, lw=2)
            ax.annotate(f"lease {e['fence']} expires {until}", (until, y + 0.22), fontsize=7)
        if e["event"] == "renew" and e["held"]:
            ax.barh(
                y,
                e["lease_ms"],
                left=e["lab_ms"],
                height=0.3,
                color=colour,
                alpha=0.25,
                hatch="//",
                label="renewed by name",
            )
        text, marker = event_mark(e)
        if text:
            x, n = placed(e)
            ax.plot(x, y, marker, color=KILL_COLOUR if "✗" in text else "black", ms=8)
            ax.annotate(text, (x, y - 0.22 - 0.12 * (n % 4)), fontsize=7)
    handles = {h.get_label(): h for h in ax.get_legend_handles_labels()[0]}
    if handles:
        ax.legend(handles.values(), handles.keys(), loc="upper right", fontsize=7)
    ax.set_yticks(list(LANES.values()), ["worker 1", "worker 2"])
    ax.set_ylim(0.2, 2.8)
    ax.set_xlim(-span * 0.05, span * 1.3)
    ax.set_xlabel("the lab's clock (ms); w2 arrives at the dashed line")
    ax.set_title(f"{r.spec.method}: {said(r.outcome)}", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def event_mark(e: dict) -> tuple[str, str]:
    """An event's label and marker on its lane ("" for events not drawn)."""
    if e["event"] == "claim":
        return (f"claim: token {e['fence']}", "^") if e["won"] else ("claim ✗ held", "x")
    if e["event"] == "write":
        return (f"write {e['fence']}", "o") if e["applied"] else (f"write {e['fence']} ✗", "X")
    if e["event"] == "done":
        return ("done", "s") if e["marked"] else ("done ✗", "s")
    if e["event"] == "renew":
        return ("renew by name: ok", "d") if e["held"] else ("renew ✗", "d")
    return "", ""


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
    a click only. Display it as the last line of a cell (it shows its widgets)."""

    def __init__(self, method: str = "lease_with_fence", pause_ms: int = 300, lease_ms: int = 200):
        import ipywidgets as widgets

        ClaimSpec(method, pause_ms, lease_ms)  # bad input: one line, before any widget
        self.result: ClaimResult | None = None
        self.error: Exception | None = None
        self.method = widgets.Dropdown(options=list(METHODS), value=method, description="method")
        slider = {"min": 0, "max": 600, "step": 50, "continuous_update": False}
        self.pause = widgets.IntSlider(value=pause_ms, description="pause ms", **slider)
        self.lease = widgets.IntSlider(
            value=lease_ms, description="lease ms", **{**slider, "min": 50}
        )
        self.run_button = widgets.Button(description="Run", button_style="primary", icon="play")
        self.status = widgets.HTML("Pick a method, a pause and a lease, then click Run.")
        self.error_line = widgets.HTML()
        self.tables = widgets.HTML()
        self.image = widgets.Image(format="png")
        self.run_button.on_click(self._on_run)
        controls = widgets.HBox([self.method, self.pause, self.lease, self.run_button])
        self.box = widgets.VBox([controls, self.status, self.error_line, self.tables, self.image])
        self.box.add_class("labkit-lease-panel")

    def _on_run(self, _button: object = None) -> None:
        from labkit.views.panel import shows_errors

        shows_errors(LeasePanel._run)(self)

    def _run(self) -> None:
        self.run_button.disabled = True
        self.status.value = (
            f"Running <b>{self.method.value}</b>: w1 frozen {self.pause.value} ms, "
            f"lease {self.lease.value} ms ..."
        )
        try:
            self.result = run_claim(self.method.value, self.pause.value, self.lease.value)
            self.status.value = f"Done. Folder: <code>{escape(str(self.result.run_dir))}</code>"
            self.tables.value = claim_html(self.result)
            self.image.value = figure_png(timeline_figure(self.result))
        finally:
            self.run_button.disabled = False

    def click(self) -> None:
        """Same as clicking Run (for scripts and tests)."""
        self.run_button.click()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.box)
