"""Views of lesson 8's runs: per-order charges under a retry policy, LangGraph's own retry table,
the error handler of #9002, a stopped and resumed run, the first-checkpoint distribution
(a figure, and a panel with a progress bar), the functional API's replay.

Text for the terminal (`format_*`) and HTML for a notebook (`*_html`) show the same rows; an
outcome is always a word with its meaning, never a colour alone. matplotlib and ipywidgets are
loaded only by the figure and the panel, so the command line never pays for them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from html import escape

from labkit.bench.errors import check_record
from labkit.studies.retries.experiment import first_checkpoint_modes
from labkit.studies.retries.outcome import ORDER_OUTCOMES
from labkit.studies.retries.spec import DRAIN_SIGNALS, FAILURES, FIRST_MODES, KEYS, POLICIES
from labkit.views.figures import figure_png
from labkit.views.palette import outcome_colour
from labkit.views.tables import CELL, failure_note, grid_html, outcome_word
from labkit.views.text import format_grid

__all__ = [  # and FirstCheckpointPanel, made on first use (`panel_class`)
    "attempt_rows",
    "drain_rows",
    "first_checkpoint_figure",
    "first_checkpoint_rows",
    "format_drain",
    "format_first_checkpoint",
    "format_functional",
    "format_handler",
    "format_retry",
    "format_retry_table",
    "panel_class",
    "retry_rows",
    "show_drain",
    "show_first_checkpoint",
    "show_functional",
    "show_handler",
    "show_retry",
    "show_retry_table",
]

RETRY_COLUMNS = ("order", "attempts", "keys", "new charges", "ended with", "outcome")
DRAIN_COLUMNS = ("stopped by", "first process", "checkpoints", "first ran", "resume ran", "twice")
FIRST_COLUMNS = ("mode", "trials", "saved: nothing", "input", "input+loop", "runs lost", "took")
SAVED = ("nothing", "input", "input+loop")
# The palette's outcome each word is drawn in (and always written beside it).
ORDER_COLOURS = {
    "charged once": "consistent",
    "duplicate": "duplicate",
    "never charged": "lost",
    "charged, run failed": "unfinished",
    "declined": "neutral",
    "failed": "failed",
}
SAVED_COLOURS = {"nothing": "lost", "input": "unfinished", "input+loop": "consistent"}


def short(key: str | None) -> str:
    """A key as a person reads it: a uuid4's 32 hex digits cut to 8."""
    if key is None:
        return "-"
    is_uuid = len(key) == 32 and all(c in "0123456789abcdef" for c in key)
    return key[:8] + "…" if is_uuid else key


def retry_rows(result: Mapping) -> list[tuple]:
    """One row per order under RETRY_COLUMNS."""
    return [
        (
            o["order"],
            o["attempts"],
            ", ".join(short(k) for k in o["keys"]),
            o["new_charges"],
            f"receipt #{o['receipt']}" if o["error"] is None else o["error"],
            o["outcome"],
        )
        for o in result["orders"]
    ]


ATTEMPT_COLUMNS = ("order", "node_attempt", "ledger line", "key", "charge", "new at the service")


def attempt_rows(result: Mapping) -> list[tuple]:
    """The ledger, one line per attempt: what each run of the node did."""
    return [
        (
            a["order"],
            a["attempt"],
            a["phase"],
            short(a["key"]),
            "-" if a["charge"] is None else f"#{a['charge']}",
            "-" if a["new"] is None else "yes" if a["new"] else "no: the original came back",
        )
        for a in result["attempts"]
    ]


def retry_heading(result: Mapping) -> str:
    spec = result["spec"]
    node = "async node, TimeoutPolicy(run_timeout=0.2)" if spec["asynchronous"] else "sync node"
    return (
        f"policy {spec['policy']} ({POLICIES[spec['policy']]}); key {spec['key']} "
        f"({KEYS[spec['key']]}); {node}; failure: {FAILURES[spec['failure']]}"
    )


def checked(result: object, keys: Sequence[str], made_by: str) -> Mapping:
    return check_record("result", result, keys, f"what {made_by} returns")


def format_retry(result: Mapping) -> str:
    result = checked(result, ("spec", "orders", "charges"), "run_retry")
    lines = [retry_heading(result), "", format_grid(RETRY_COLUMNS, retry_rows(result)), ""]
    lines.append(f"The payment service holds {len(result['charges'])} charges.")
    lines += [
        f"  {word}: {ORDER_OUTCOMES[word]}"
        for word in sorted({o["outcome"] for o in result["orders"]})
    ]
    if result["failure"]:
        lines.append(f"FAILED (no outcome claimed): {result['failure']}")
    return "\n".join(lines)


def retry_html(result: Mapping) -> str:
    result = checked(result, ("spec", "orders", "charges"), "run_retry")
    head = "".join(f'<th style="{CELL}">{escape(h)}</th>' for h in RETRY_COLUMNS)
    body = "".join(
        "<tr>"
        + "".join(f'<td style="{CELL}">{escape(str(v))}</td>' for v in row[:-1])
        + f'<td style="{CELL}">{outcome_word(ORDER_COLOURS[row[-1]], row[-1].upper())}</td></tr>'
        for row in retry_rows(result)
    )
    meanings = "".join(
        f"<li><b>{escape(w)}</b>: {escape(ORDER_OUTCOMES[w])}</li>"
        for w in sorted({o["outcome"] for o in result["orders"]})
    )
    return (
        f"<p>{escape(retry_heading(result))}</p>"
        f'<table style="border-collapse:collapse"><tr>{head}</tr>{body}</table>'
        f"<p>The payment service holds <b>{len(result['charges'])}</b> charges.</p>"
        f"<ul>{meanings}</ul><details><summary>the ledger: one line per attempt</summary>"
        f"{grid_html(ATTEMPT_COLUMNS, attempt_rows(result))}</details>"
        f"{failure_note(result['failure'])}"
    )


def format_retry_table(rows: Sequence[Mapping]) -> str:
    """LangGraph's default retry_on, as the installed library answered it."""
    grid = [(r["error"], r["status"] or "-", "yes" if r["retried"] else "no") for r in rows]
    return format_grid(("error", "HTTP status", "retried by RetryPolicy()"), grid)


def retry_table_html(rows: Sequence[Mapping]) -> str:
    grid = [(r["error"], r["status"] or "-", "RETRIED" if r["retried"] else "no") for r in rows]
    return grid_html(("error", "HTTP status", "RetryPolicy() retries it?"), grid)


def handler_lines(result: Mapping) -> list[str]:
    runs, spec = result["handler_runs"], result["spec"]
    way = "add_node(error_handler=...)" if spec["way"] == "add_node" else "set_node_defaults(...)"
    keys = ", ".join(short(r["key"]) for r in result["refunds"])
    return [
        f"error handler set with {way}; refund key: "
        + ("from the order" if spec["keyed"] else "a new uuid4"),
        f"the handler ran {runs['first']} time(s) in the first process and {runs['resume']} in "
        f"the resumed one (issue #9002)",
        f"refunds the payment service holds: {len(result['refunds'])} ({keys or 'none'})",
        f"the handler saw the error as: {' then '.join(result['handler_saw'])}",
        f"state after the resume: {', '.join(result['resume'].get('log', []))}",
    ]


def format_handler(result: Mapping) -> str:
    result = checked(result, ("handler_runs", "refunds", "resume"), "run_handler")
    failed = [f"FAILED (no outcome claimed): {result['failure']}"] if result["failure"] else []
    return "\n".join(handler_lines(result) + failed)


def handler_html(result: Mapping) -> str:
    result = checked(result, ("handler_runs", "refunds", "resume"), "run_handler")
    items = "".join(f"<li>{escape(line)}</li>" for line in handler_lines(result))
    return f"<ul>{items}</ul>{failure_note(result['failure'])}"


def drain_rows(results: Sequence[Mapping]) -> list[tuple]:
    """One row per stopped run under DRAIN_COLUMNS."""
    return [
        (
            r["spec"]["signal"] + ("" if r["spec"]["drain_safe"] else " (no handler)"),
            f"{r['ended']} ({r['first_exit']})",
            r["checkpoints_at_stop"],
            " ".join(r["ran"]["first"]),
            " ".join(r["ran"]["resume"]),
            " ".join(r["rerun_nodes"]) or "-",
        )
        for r in results
    ]


def format_drain(results: Sequence[Mapping]) -> str:
    results = [checked(r, ("spec", "ended", "ran"), "run_drain") for r in results]
    notes = [
        f"  {s}: {DRAIN_SIGNALS[s]}" for s in dict.fromkeys(r["spec"]["signal"] for r in results)
    ]
    failed = [f"FAILED: {r['failure']}" for r in results if r["failure"]]
    return "\n".join([format_grid(DRAIN_COLUMNS, drain_rows(results)), *notes, *failed])


def drain_html(results: Sequence[Mapping]) -> str:
    results = [checked(r, ("spec", "ended", "ran"), "run_drain") for r in results]
    notes = "".join(failure_note(r["failure"]) for r in results)
    return grid_html(DRAIN_COLUMNS, drain_rows(results)) + notes


def first_checkpoint_rows(results: Mapping[str, Mapping]) -> list[tuple]:
    """One row per mode under FIRST_COLUMNS (a mode's trials that failed are counted apart)."""
    return [
        (
            mode,
            r["trials"] - r["failed"],
            *(r["saved"].get(word, 0) for word in SAVED),
            f"{r['lost']} of {r['trials'] - r['failed']}",
            f"{r['seconds']:.1f} s",
        )
        for mode, r in results.items()
    ]


def format_first_checkpoint(results: Mapping[str, Mapping]) -> str:
    grid = format_grid(FIRST_COLUMNS, first_checkpoint_rows(results))
    failed = sum(r["failed"] for r in results.values())
    note = f"\n{failed} trials failed by themselves and are not counted." if failed else ""
    return (
        f"{grid}\nA run is lost when recovery finds nothing to resume (EmptyInputError): the "
        f"caller's own ledger says it was accepted, LangGraph has no trace of it.{note}"
    )


def first_checkpoint_figure(results: Mapping[str, Mapping]) -> object:
    """One bar per mode: how many trials' files held nothing, the input checkpoint, or the
    input and step 0's, when the first node was killed; each part labelled with its count."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 0.9 + 0.55 * len(results)))
    ax = figure.subplots()
    modes = list(results)
    for y, mode in enumerate(modes):
        left = 0
        for word in SAVED:
            count = results[mode]["saved"].get(word, 0)
            if count:
                colour = outcome_colour(SAVED_COLOURS[word])
                ax.barh(y, count, left=left, color=colour, edgecolor="white")
                label = f"{word} {count}" if count >= results[mode]["trials"] / 8 else str(count)
                ax.text(left + count / 2, y, label, ha="center", va="center", fontsize=8)
            left += count
    ax.set_yticks(range(len(modes)), [f"{m}\n{results[m]['lost']} lost" for m in modes])
    ax.invert_yaxis()
    ax.set_xlabel("trials: what the checkpoint file held when the first node was killed")
    ax.spines[["top", "right"]].set_visible(False)
    figure.tight_layout()
    return figure


def format_functional(result: Mapping) -> str:
    result = checked(result, ("runs", "lines", "charged_ref"), "run_functional")
    where = "in a task of its own" if result["spec"]["ref_in_task"] else "outside any task"
    lines = [f"the order reference is made {where}; SIGKILL inside ship, then invoke(None):"]
    lines += [
        f"  {ln['role']:<6} {ln['node']:<10} {ln['phase']:<5} {ln['ref']}" for ln in result["lines"]
    ]
    runs = result["runs"]
    lines.append(
        f"entrypoint body ran {runs['entrypoint']}×, charge {runs['charge']}×, ship started "
        f"{runs['ship']}×; charged {result['charged_ref']}, shipped {result['shipped_ref']}"
        + (" (they differ)" if result["charged_ref"] != result["shipped_ref"] else "")
    )
    if result["failure"]:
        lines.append(f"FAILED (no outcome claimed): {result['failure']}")
    return "\n".join(lines)


def functional_html(result: Mapping) -> str:
    result = checked(result, ("runs", "lines", "charged_ref"), "run_functional")
    rows = [(ln["role"], ln["node"], ln["phase"], ln["ref"]) for ln in result["lines"]]
    differ = result["charged_ref"] != result["shipped_ref"]
    verdict = outcome_word(
        "duplicate" if differ else "consistent", "REFS DIFFER" if differ else "SAME REF"
    )
    return (
        grid_html(("process", "where", "ledger line", "order reference"), rows)
        + f"<p>charged <code>{escape(str(result['charged_ref']))}</code>, shipped "
        f"<code>{escape(str(result['shipped_ref']))}</code> {verdict}</p>"
        + failure_note(result["failure"])
    )


def show(html: str) -> None:
    from labkit.views import show_html

    show_html(html)


def show_retry(result: Mapping) -> None:
    show(retry_html(result))


def show_retry_table(rows: Sequence[Mapping]) -> None:
    show(retry_table_html(rows))


def show_handler(result: Mapping) -> None:
    show(handler_html(result))


def show_drain(results: Sequence[Mapping]) -> None:
    show(drain_html(results))


def show_functional(result: Mapping) -> None:
    show(functional_html(result))


def show_first_checkpoint(results: Mapping[str, Mapping]) -> None:
    """The distribution's table and its figure, in the notebook."""
    from IPython.display import Image, display

    show(grid_html(FIRST_COLUMNS, first_checkpoint_rows(results)))
    display(Image(figure_png(first_checkpoint_figure(results))))


@functools.cache
def panel_class() -> type:
    """The panel's class, made on first use: ipywidgets loads only when a notebook asks."""
    import ipywidgets as widgets

    from labkit.views.background import BackgroundJob, Report

    class FirstCheckpointPanel(widgets.VBox):
        """Pick the modes and the trials, click Run, watch the bar (or Stop), read the figure."""

        def __init__(self, trials: int = 200) -> None:
            self.results: dict[str, dict] = {}
            self.error: Exception | None = None
            self.modes = widgets.SelectMultiple(
                options=list(FIRST_MODES), value=list(FIRST_MODES), description="modes", rows=3
            )
            self.trials = widgets.IntSlider(
                value=trials,
                min=10,
                max=500,
                step=10,
                description="trials/mode",
                continuous_update=False,
            )
            self.run_button = widgets.Button(
                description="Run trials", button_style="primary", icon="play"
            )
            self.status, self.error_line, self.table = (
                widgets.HTML(),
                widgets.HTML(),
                widgets.HTML(),
            )
            self.figure = widgets.Image(format="png")
            self.job = BackgroundJob(self, [self.run_button], unit="trials", stoppable=True)
            self.progress = self.job.progress
            self.run_button.on_click(self._on_run)
            controls = widgets.HBox([self.modes, widgets.VBox([self.trials, self.run_button])])
            parts = [controls, self.job.row, self.status, self.error_line, self.table, self.figure]
            super().__init__(parts)
            self.add_class("labkit-first-checkpoint-panel")

        def _on_run(self, _button: object = None) -> None:
            modes, trials = self.modes.value or FIRST_MODES, self.trials.value

            def work(report: Report) -> dict[str, dict]:
                def advance(done: int, total: int, trial: dict) -> None:
                    report(done, total, f"held {trial['saved']} at the kill")

                return first_checkpoint_modes(tuple(modes), trials, progress=advance)

            what = f"{trials} killed runs per mode ({', '.join(modes)})"
            self.job.start(what, work, self.show)

        def show(self, results: dict[str, dict]) -> None:
            self.results = results
            self.table.value = grid_html(FIRST_COLUMNS, first_checkpoint_rows(results))
            self.figure.value = figure_png(first_checkpoint_figure(results))

        def click(self) -> None:
            """Same as clicking Run trials (`self.job.wait()` waits for the end)."""
            self.run_button.click()

    return FirstCheckpointPanel


def __getattr__(name: str) -> object:
    """`FirstCheckpointPanel` is made when first asked for (see `panel_class`)."""
    if name == "FirstCheckpointPanel":
        return panel_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
