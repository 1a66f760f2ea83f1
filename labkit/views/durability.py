"""Views of study 004's trials: the distribution plot, the trial table, the decoded checkpoint
file, and the pitfalls gallery."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from IPython.display import HTML, Image, display
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from labkit.bench.errors import check_choice, check_items, check_record
from labkit.language import say
from labkit.language.spacing import apart
from labkit.studies.durability.experiment import DURABILITY_MODES, Trial
from labkit.studies.durability.pitfalls import PITFALLS
from labkit.views.durability_trials import trial_headers, trial_rows
from labkit.views.figures import figure_png, new_figure
from labkit.views.given_values import given_value
from labkit.views.tables import grid_html, headers
from labkit.views.text import record_table

__all__ = [
    "async_behind_text",
    "checkpoints_html",
    "clean_runs_line",
    "distribution_figure",
    "pitfall_html",
    "show_checkpoints",
    "show_library_facts",
    "show_pitfall",
    "show_study_figures",
    "show_trials",
    "then_and_today",
    "trials_html",
]

GRAPH_COLOURS = {"linear": "#0072B2", "parallel": "#E69F00"}  # Okabe-Ito blue, orange
GRAPH_MARKERS = {"linear": "o", "parallel": "s"}
DESCRIBED = ("checkpoints", "writes")  # the keys of what describe_checkpoints returns
PITFALL_REPORT = ("raised", "outcome", "warnings")  # and those of run_pitfall's report
CHECKPOINT_COLUMNS = ("step", "source", "next", "interrupts", "id")
WRITE_COLUMNS = ("id", "saved", "task", "channel", "value")


def trials_html(trials: Sequence[Trial]) -> str:
    """One row per trial: what the kill left, and what recovery did with it."""
    return grid_html(trial_headers(), trial_rows(trials))


def distribution_figure(trials: Sequence[Trial]) -> Figure:
    """Per durability mode, each trial as a dot: checkpoints kept at the kill, and ledger lines
    after recovery against a clean run (below zero: work lost; above: work done twice).
    A failed trial has no outcome to plot: the figure says how many were left out."""
    failed = sum(1 for t in trials if t.failure)
    trials = [t for t in trials if not t.failure]
    fig = new_figure((10, 3.6))
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
                    "label": say(f"durability.graph.{graph}") if (m_index, k) == (0, 0) else None,
                }
                left.plot(x, t.checkpoints, linestyle="", **style)
                right.plot(x, t.ledger_lines - t.baseline_lines, linestyle="", **style)
    titles = (say("durability.figure.checkpoints"), say("durability.figure.ledger"))
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
        fig.suptitle(say("durability.figure.failed", failed=failed), fontsize=10)
    fig.tight_layout()
    return fig


def checkpoints_html(described: dict) -> str:
    """The checkpoint file as LangGraph reads it: checkpoints newest first, then writes."""
    checkpoints = [
        (
            c["step"],
            c["source"],
            ", ".join(c["next"]) or "—",
            "; ".join(map(given_value, c["interrupts"])) or "—",
            c["checkpoint_id"][-12:],
        )
        for c in described["checkpoints"]
    ]
    writes = [
        (
            w["checkpoint_id"][-12:],
            say(
                "durability.checkpoints.yes"
                if w["checkpoint_saved"]
                else "durability.checkpoints.ignored"
            ),
            w["task_id"],
            w["channel"],
            w["value"],
        )
        for w in described["writes"]
    ]
    none = [(say("common.nothing"), "", "", "", "")]

    history = say("durability.checkpoints.from", call="<code>get_state_history</code>")
    title = say("durability.checkpoints.title")
    return (
        f"<p>{apart(f'<b>{title}</b>', history)}</p>"
        + grid_html(headers("durability.checkpoints", CHECKPOINT_COLUMNS), checkpoints or none)
        + f"<p><b>{say('durability.checkpoints.writes')}</b> "
        f"{escape(say('durability.checkpoints.decoded'))}</p>"
        + grid_html(headers("durability.checkpoints", WRITE_COLUMNS), writes or none)
    )


def pitfall_html(name: str, report: dict) -> str:
    """What happened today, beside what study 004 reported."""
    raised, outcome = report["raised"], report["outcome"]
    no_exception = escape(say("durability.pitfall.no_exception"))
    if raised:
        today = f"<code>{escape(raised['type'])}: {escape(raised['message'])}</code>"
    elif isinstance(outcome, list):  # one record per case, e.g. each durability spelling
        header = headers("durability.record", list(outcome[0])) if outcome else []
        today = f"{no_exception}{grid_html(header, record_table(outcome)[1])}"
    else:
        today = f"{no_exception} <code>{escape(str(outcome))}</code>"
    warned = "".join(
        "<br>" + say("durability.pitfall.warning", warning=f"<code>{escape(w)}</code>")
        for w in report["warnings"]
    )
    said = say("durability.pitfall.study_saw", said=say(f"durability.pitfall.{name}.said"))
    return (
        f"<p><b>{escape(say(f'durability.pitfall.{name}.title'))}</b><br>"
        f"{say('durability.pitfall.today', today=today)}{warned}<br>"
        f"<span style='color:#555'>{escape(said)}</span></p>"
    )


def then_and_today(what: str, then: object, today: object) -> str:
    """A fact of LangGraph as study 004 read it in 1.2.18 beside the installed one's
    (`what`: types_py_line, main_py_line or default), and whether today differs."""
    same = say("durability.lines.same" if today == then else "durability.lines.differs")
    what = say(f"durability.lines.fact.{what}")
    return say("durability.lines.then_today", what=what, then=then, today=today, same=same)


def async_behind_text(
    graph: str, sync_kept: int, behind: Sequence[Trial], in_async: Sequence[Trial]
) -> str:
    """How many async trials kept fewer checkpoints than sync, then what each of those kept and
    what recovery ran again ("(lost)": nothing was left to resume)."""
    head = say(
        "durability.lines.async_behind",
        graph=graph,
        kept=sync_kept,
        behind=len(behind),
        trials=len(in_async),
    )
    return "\n".join(
        [head]
        + [
            say(
                "durability.lines.behind_trial",
                checkpoints=t.checkpoints,
                nodes=", ".join(t.rerun_nodes) or say("durability.lines.lost"),
            )
            for t in behind
        ]
    )


def clean_runs_line(ms: int, runs: Mapping[str, Mapping]) -> str:
    """A clean run of each mode with every put() delayed `ms`: its seconds and checkpoints."""
    each = [
        say(
            "durability.lines.clean_run", mode=m, seconds=r["seconds"], checkpoints=r["checkpoints"]
        )
        for m, r in runs.items()
    ]
    return say("durability.lines.clean_runs", ms=ms, runs="  ".join(each))


def show_trials(trials: Sequence[Trial]) -> None:
    """The distribution plot (for more than one trial), then the table of every trial."""
    check_items("trials", trials, Trial, "trials")
    if len(trials) > 1:
        display(Image(figure_png(distribution_figure(trials))))
    display(HTML(trials_html(trials)))


def show_checkpoints(described: dict) -> None:
    """The checkpoint file as `describe_checkpoints` decoded it."""
    check_record("described", described, DESCRIBED, "described_checkpoints")
    display(HTML(checkpoints_html(described)))


def show_pitfall(name: str, report: dict) -> None:
    """One pitfall as `run_pitfall(name)` reproduced it today."""
    check_choice("pitfall", name, PITFALLS)
    check_record("report", report, PITFALL_REPORT, "pitfall_report")
    display(HTML(pitfall_html(name, report)))


def show_study_figures(rows: Sequence[tuple[str, str, str]]) -> None:
    """Study 004's figures beside today's (the rows `beside_today` computes)."""
    check_items("rows", rows, tuple, "beside_today_rows")
    header = headers("durability.study_figures", ("figure", "reported", "today"))
    display(HTML(grid_html(header, rows)))


LIBRARY_FACTS = ("version", "literal_at", "default", "default_at", "definitions", "definitions_in")


def show_library_facts(facts: dict) -> None:
    """What the installed LangGraph says about durability, each with the file and line it is in."""
    check_record("facts", facts, LIBRARY_FACTS, "library_facts")

    def code(text: str) -> str:
        return f"<code>{escape(text)}</code>"

    def at(place: dict) -> str:
        return say("durability.library.place", file=code(place["file"]), line=place["line"])

    literal, default = facts["literal_at"], facts["default_at"]
    definitions = "".join(f"<li>{escape(text)}</li>" for text in facts["definitions"].values())
    lines = (
        say(
            "durability.library.literal",
            version=escape(facts["version"]),
            literal=code(literal["text"]),
            place=at(literal),
        ),
        say(
            "durability.library.default",
            default=f"<b>{escape(facts['default'])}</b>",
            text=code(default["text"]),
            place=at(default),
        ),
        say("durability.library.definitions", where=code(facts["definitions_in"])),
    )
    display(HTML(f"<p>{'<br>'.join(lines)}</p><ul>{definitions}</ul>"))
