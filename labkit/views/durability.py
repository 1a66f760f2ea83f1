"""Views of study 004's trials: the distribution plot, the trial table, the decoded checkpoint
file, and the pitfalls gallery."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from IPython.display import HTML, Image, display
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from labkit.bench.errors import check_choice, check_items, check_record
from labkit.studies.durability.experiment import DURABILITY_MODES, Trial
from labkit.studies.durability.pitfalls import PITFALLS
from labkit.views.figures import figure_png
from labkit.views.tables import grid_html
from labkit.views.text import record_table

__all__ = [
    "checkpoints_html",
    "distribution_figure",
    "pitfall_html",
    "show_checkpoints",
    "show_library_facts",
    "show_pitfall",
    "show_study_figures",
    "show_trials",
    "trials_html",
]

GRAPH_COLOURS = {"linear": "#0072B2", "parallel": "#E69F00"}  # Okabe-Ito blue, orange
GRAPH_MARKERS = {"linear": "o", "parallel": "s"}
DESCRIBED = ("checkpoints", "writes")  # the keys of what describe_checkpoints returns
PITFALL_REPORT = ("raised", "outcome", "warnings")  # and those of run_pitfall's report


def trial_outcome(trial: Trial) -> str:
    """In words: failed (and why), lost (nothing to resume), or how much ran again."""
    if trial.failure:
        return f"FAILED, no outcome: {trial.failure}"
    if not trial.resumed:
        return "nothing to resume: the run is lost"
    extra = trial.ledger_lines - trial.baseline_lines
    return f"resumed; ran again: {', '.join(trial.rerun_nodes) or 'nothing'} (+{extra} lines)"


def trials_html(trials: Sequence[Trial]) -> str:
    """One row per trial: what the kill left, and what recovery did with it."""
    rows = [
        (
            t.spec.graph,
            t.spec.mode,
            t.spec.slow_ms,
            t.spec.kill_moment,
            t.first_exit,
            "yes" if t.killed_inside else "NO",
            t.checkpoints,
            t.writes,
            t.orphan_writes,
            f"{t.ledger_lines} / {t.baseline_lines}",
            trial_outcome(t),
        )
        for t in trials
    ]
    header = (
        "graph",
        "durability",
        "slow ms",
        "kill moment",
        "first exit",
        "killed inside",
        "checkpoints",
        "writes",
        "writes of unsaved checkpoints",
        "ledger lines / clean run",
        "recovery",
    )
    return grid_html(header, rows)


def distribution_figure(trials: Sequence[Trial]) -> Figure:
    """Per durability mode, each trial as a dot: checkpoints kept at the kill, and ledger lines
    after recovery against a clean run (below zero: work lost; above: work done twice).
    A failed trial has no outcome to plot: the figure says how many were left out."""
    failed = sum(1 for t in trials if t.failure)
    trials = [t for t in trials if not t.failure]
    fig = Figure(figsize=(10, 3.6))
    left, right = fig.subplots(1, 2)
    modes = [m for m in DURABILITY_MODES if any(t.spec.mode == m for t in trials)]
    graphs = sorted({t.spec.graph for t in trials})
    for g_index, graph in enumerate(graphs):
        for m_index, mode in enumerate(modes):
            mine = [t for t in trials if t.spec.graph == graph and t.spec.mode == mode]
            for k, t in enumerate(mine):
                x = m_index + (g_index - (len(graphs) - 1) / 2) * 0.25 + (k - len(mine) / 2) * 0.03
                style = {
                    "color": GRAPH_COLOURS.get(graph),
                    "marker": GRAPH_MARKERS.get(graph),
                    "alpha": 0.75,
                    "label": graph if (m_index, k) == (0, 0) else None,
                }
                left.plot(x, t.checkpoints, linestyle="", **style)
                right.plot(x, t.ledger_lines - t.baseline_lines, linestyle="", **style)
    titles = (
        "checkpoints saved when the kill landed",
        "ledger lines after recovery − clean run\n(below 0: work lost; above 0: done twice)",
    )
    for ax, title in zip((left, right), titles, strict=True):
        ax.set_xticks(range(len(modes)))
        ax.set_xticklabels([f'durability="{m}"' for m in modes])
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    left.set_ylim(bottom=-0.3)
    right.axhline(0, color="#555555", lw=1)
    if trials:
        left.legend(fontsize=8)
    if failed:
        fig.suptitle(f"{failed} failed trial(s) not shown: see the table", fontsize=10)
    fig.tight_layout()
    return fig


def checkpoints_html(described: dict) -> str:
    """The checkpoint file as LangGraph reads it: checkpoints newest first, then writes."""
    checkpoints = [
        (
            c["step"],
            c["source"],
            ", ".join(c["next"]) or "—",
            "; ".join(c["interrupts"]) or "—",
            c["checkpoint_id"][-12:],
        )
        for c in described["checkpoints"]
    ]
    writes = [
        (
            w["checkpoint_id"][-12:],
            "yes" if w["checkpoint_saved"] else "NO (ignored)",
            w["task_id"],
            w["channel"],
            w["value"],
        )
        for w in described["writes"]
    ]
    return (
        "<p><b>checkpoints</b> (from <code>get_state_history</code>, newest first)</p>"
        + grid_html(
            ("step", "source", "next", "pending interrupts", "checkpoint id (end)"),
            checkpoints or [("(none)", "", "", "", "")],
        )
        + "<p><b>writes</b> (decoded with the saver's serializer)</p>"
        + grid_html(
            ("checkpoint id (end)", "checkpoint saved?", "task", "channel", "value"),
            writes or [("(none)", "", "", "", "")],
        )
    )


def pitfall_html(name: str, report: dict) -> str:
    """What happened today, beside what study 004 reported."""
    raised, outcome = report["raised"], report["outcome"]
    if raised:
        today = f"<code>{escape(raised['type'])}: {escape(raised['message'])}</code>"
    elif isinstance(outcome, list):  # one record per case, e.g. each durability spelling
        today = f"no exception; outcome:{grid_html(*record_table(outcome))}"
    else:
        today = f"no exception; outcome: <code>{escape(str(outcome))}</code>"
    warned = "".join(f"<br>warning: <code>{escape(w)}</code>" for w in report["warnings"])
    pitfall = PITFALLS[name]
    return (
        f"<p><b>{escape(pitfall.title)}</b><br>today: {today}{warned}<br>"
        f"<span style='color:#555'>study 004 saw: {escape(pitfall.study_said)}</span></p>"
    )


def show_trials(trials: Sequence[Trial]) -> None:
    """The distribution plot (for more than one trial), then the table of every trial."""
    check_items("trials", trials, Trial, "a list of Trial (what run_trials returns)")
    if len(trials) > 1:
        display(Image(figure_png(distribution_figure(trials))))
    display(HTML(trials_html(trials)))


def show_checkpoints(described: dict) -> None:
    """The checkpoint file as `describe_checkpoints` decoded it."""
    check_record("described", described, DESCRIBED, "what describe_checkpoints returns")
    display(HTML(checkpoints_html(described)))


def show_pitfall(name: str, report: dict) -> None:
    """One pitfall as `run_pitfall(name)` reproduced it today."""
    check_choice("pitfall", name, PITFALLS)
    check_record("report", report, PITFALL_REPORT, f"what run_pitfall({name!r}) returns")
    display(HTML(pitfall_html(name, report)))


def show_study_figures(rows: Sequence[tuple[str, str, str]]) -> None:
    """Study 004's figures beside today's (the rows `beside_today` computes)."""
    check_items("rows", rows, tuple, "the rows beside_today returns")
    display(HTML(grid_html(("figure", "study 004 reported", "today, on this machine"), rows)))


LIBRARY_FACTS = ("version", "literal_at", "default", "default_at", "definitions", "definitions_in")


def show_library_facts(facts: dict) -> None:
    """What the installed LangGraph says about durability, each with the file and line it is in."""
    check_record("facts", facts, LIBRARY_FACTS, "what durability_in_library returns")

    def at(place: dict) -> str:
        return f"<code>{escape(place['file'])}</code> line {place['line']}"

    definitions = "".join(f"<li>{escape(text)}</li>" for text in facts["definitions"].values())
    display(
        HTML(
            f"<p>langgraph {escape(facts['version'])}: <code>{escape(facts['literal_at']['text'])}"
            f"</code> ({at(facts['literal_at'])})<br>the default when none is given: "
            f"<b>{escape(facts['default'])}</b>, from <code>{escape(facts['default_at']['text'])}"
            f"</code> ({at(facts['default_at'])})<br>the three definitions, from "
            f"<code>{escape(facts['definitions_in'])}</code>:</p><ul>{definitions}</ul>"
        )
    )
