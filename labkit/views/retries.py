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
from labkit.language import say
from labkit.studies.retries.experiment import first_checkpoint_modes
from labkit.studies.retries.spec import FIRST_MODES
from labkit.views.figures import figure_png, new_figure, picture, show_picture
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
    "handler_runs_text",
    "lost_runs_text",
    "panel_class",
    "retry_rows",
    "show_drain",
    "show_first_checkpoint",
    "show_functional",
    "show_handler",
    "show_retry",
    "show_retry_table",
]

# Each table's columns, by their keys in the catalogue ("retries.column.<key>").
RETRY_COLUMNS = ("order", "attempts", "keys", "new_charges", "ended_with", "outcome")
ATTEMPT_COLUMNS = ("order", "node_attempt", "ledger_line", "key", "charge", "new_at_service")
DRAIN_COLUMNS = ("stopped_by", "first_process", "checkpoints", "first_ran", "resume_ran", "twice")
FIRST_COLUMNS = ("mode", "trials", "saved_nothing", "input", "input_loop", "runs_lost", "took")
FUNCTIONAL_COLUMNS = ("process", "where", "ledger_line", "order_reference")
SAVED = ("nothing", "input", "input+loop")
# How runs.stop_while_b_works says the first process ended (its words, as codes).
ENDED = ("no stop", "killed", "killed after the grace period", "exited", "terminated by SIGTERM")
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


def header(columns: Sequence[str]) -> list[str]:
    """A table's columns in the reader's language."""
    return [say(f"retries.column.{key}") for key in columns]


def order_word(outcome: str) -> str:
    """An order's outcome (outcome.py's code) as the reader's language says it."""
    return say(f"retries.order_word.{outcome}")


def ended_word(ended: str) -> str:
    """How the first process ended, in words ("exited 3" has no other words: shown as is)."""
    return say(f"retries.ended.{ended}") if ended in ENDED else ended


def saved_word(saved: str) -> str:
    """What the checkpoint file held at the kill, in words (a mix SAVED does not name: as is)."""
    return say(f"retries.saved.{saved}") if saved in SAVED else saved


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
            say("retries.receipt", receipt=o["receipt"]) if o["error"] is None else o["error"],
            order_word(o["outcome"]),
        )
        for o in result["orders"]
    ]


def attempt_rows(result: Mapping) -> list[tuple]:
    """The ledger, one line per attempt: what each run of the node did."""
    return [
        (
            a["order"],
            a["attempt"],
            a["phase"],
            short(a["key"]),
            "-" if a["charge"] is None else f"#{a['charge']}",
            "-" if a["new"] is None else say("retries.new" if a["new"] else "retries.original"),
        )
        for a in result["attempts"]
    ]


def retry_heading(result: Mapping) -> str:
    spec = result["spec"]
    return say(
        "retries.heading",
        policy=spec["policy"],
        policy_meaning=say(f"retries.policy.{spec['policy']}"),
        key=spec["key"],
        key_meaning=say(f"retries.key.{spec['key']}"),
        node=say("retries.async_node" if spec["asynchronous"] else "retries.sync_node"),
        failure=say(f"retries.failure.{spec['failure']}"),
    )


def meanings(result: Mapping) -> list[tuple[str, str]]:
    """Each outcome word the orders got, with what it means."""
    words = sorted({o["outcome"] for o in result["orders"]})
    return [(order_word(w), say(f"retries.order_meaning.{w}")) for w in words]


def checked(result: object, keys: Sequence[str], made_by: str) -> Mapping:
    return check_record("result", result, keys, f"what {made_by} returns")


def format_retry(result: Mapping) -> str:
    result = checked(result, ("spec", "orders", "charges"), "run_retry")
    lines = [retry_heading(result), "", format_grid(header(RETRY_COLUMNS), retry_rows(result)), ""]
    lines.append(say("retries.charges", count=len(result["charges"])))
    lines += ["  " + say("retries.meaning", word=w, meaning=m) for w, m in meanings(result)]
    if result["failure"]:
        lines.append(say("retries.no_outcome", failure=result["failure"]))
    return "\n".join(lines)


def retry_html(result: Mapping) -> str:
    result = checked(result, ("spec", "orders", "charges"), "run_retry")
    head = "".join(f'<th style="{CELL}">{escape(h)}</th>' for h in header(RETRY_COLUMNS))
    body = "".join(
        "<tr>"
        + "".join(f'<td style="{CELL}">{escape(str(v))}</td>' for v in row[:-1])
        + f'<td style="{CELL}">{outcome_word(ORDER_COLOURS[order["outcome"]], row[-1].upper())}'
        "</td></tr>"
        for order, row in zip(result["orders"], retry_rows(result), strict=True)
    )
    listed = "".join(
        f"<li>{say('retries.meaning', word=f'<b>{escape(w)}</b>', meaning=escape(m))}</li>"
        for w, m in meanings(result)
    )
    charges = say("retries.charges", count=f"<b>{len(result['charges'])}</b>")
    return (
        f"<p>{escape(retry_heading(result))}</p>"
        f'<table style="border-collapse:collapse"><tr>{head}</tr>{body}</table>'
        f"<p>{charges}</p>"
        f"<ul>{listed}</ul><details><summary>{escape(say('retries.ledger'))}</summary>"
        f"{grid_html(header(ATTEMPT_COLUMNS), attempt_rows(result))}</details>"
        f"{failure_note(result['failure'])}"
    )


def format_retry_table(rows: Sequence[Mapping]) -> str:
    """LangGraph's default retry_on, as the installed library answered it."""
    retried = {True: say("retries.retried"), False: say("retries.not_retried")}
    grid = [(r["error"], r["status"] or "-", retried[bool(r["retried"])]) for r in rows]
    return format_grid(header(("error", "status", "retried_by")), grid)


def retry_table_html(rows: Sequence[Mapping]) -> str:
    retried = {True: say("retries.retried_html"), False: say("retries.not_retried")}
    grid = [(r["error"], r["status"] or "-", retried[bool(r["retried"])]) for r in rows]
    return grid_html(header(("error", "status", "retries_it")), grid)


def handler_lines(result: Mapping) -> list[str]:
    runs, spec = result["handler_runs"], result["spec"]
    way = "add_node(error_handler=...)" if spec["way"] == "add_node" else "set_node_defaults(...)"
    keys = ", ".join(short(r["key"]) for r in result["refunds"]) or say("retries.handler.none")
    refund_key = say("retries.handler.from_order" if spec["keyed"] else "retries.handler.new_uuid")
    seen = say("retries.handler.then").join(result["handler_saw"])
    return [
        say("retries.handler.set_with", way=way, refund_key=refund_key),
        say("retries.handler.ran", first=runs["first"], resume=runs["resume"]),
        say("retries.handler.refunds", count=len(result["refunds"]), keys=keys),
        say("retries.handler.saw", seen=seen),
        say("retries.handler.state", log=", ".join(result["resume"].get("log", []))),
    ]


def handler_runs_text(way: str, first: int, resume: int, refunds: int) -> str:
    """How often an error handler set one `way` ran, in the first process and the resumed
    one, and the refunds the payment service holds afterwards."""
    return say("retries.lines.handler_runs", way=way, first=first, resume=resume, refunds=refunds)


def lost_runs_text(mode: str, lost: int, counted: int) -> str:
    """A durability mode's accepted runs that left no trace, of the `counted` that ran as
    planned, and the share."""
    percent = 100 * lost / counted
    return say("retries.lines.lost_runs", mode=mode, lost=lost, counted=counted, percent=percent)


def format_handler(result: Mapping) -> str:
    result = checked(result, ("handler_runs", "refunds", "resume"), "run_handler")
    failed = [say("retries.no_outcome", failure=result["failure"])] if result["failure"] else []
    return "\n".join(handler_lines(result) + failed)


def handler_html(result: Mapping) -> str:
    result = checked(result, ("handler_runs", "refunds", "resume"), "run_handler")
    items = "".join(f"<li>{escape(line)}</li>" for line in handler_lines(result))
    return f"<ul>{items}</ul>{failure_note(result['failure'])}"


def drain_rows(results: Sequence[Mapping]) -> list[tuple]:
    """One row per stopped run under DRAIN_COLUMNS."""
    return [
        (
            r["spec"]["signal"]
            + ("" if r["spec"]["drain_safe"] else say("retries.drain.no_handler")),
            say("retries.exit", ended=ended_word(r["ended"]), code=r["first_exit"]),
            r["checkpoints_at_stop"],
            " ".join(r["ran"]["first"]),
            " ".join(r["ran"]["resume"]),
            " ".join(r["rerun_nodes"]) or "-",
        )
        for r in results
    ]


def format_drain(results: Sequence[Mapping]) -> str:
    results = [checked(r, ("spec", "ended", "ran"), "run_drain") for r in results]
    signals = dict.fromkeys(r["spec"]["signal"] for r in results)
    notes = [
        "  " + say("retries.meaning", word=s, meaning=say(f"retries.signal.{s}")) for s in signals
    ]
    failed = [say("retries.failed", failure=r["failure"]) for r in results if r["failure"]]
    return "\n".join([format_grid(header(DRAIN_COLUMNS), drain_rows(results)), *notes, *failed])


def drain_html(results: Sequence[Mapping]) -> str:
    results = [checked(r, ("spec", "ended", "ran"), "run_drain") for r in results]
    notes = "".join(failure_note(r["failure"]) for r in results)
    return grid_html(header(DRAIN_COLUMNS), drain_rows(results)) + notes


def first_checkpoint_rows(results: Mapping[str, Mapping]) -> list[tuple]:
    """One row per mode under FIRST_COLUMNS (a mode's trials that failed are counted apart)."""
    return [
        (
            mode,
            r["trials"] - r["failed"],
            *(r["saved"].get(word, 0) for word in SAVED),
            say("retries.first.lost_of", lost=r["lost"], trials=r["trials"] - r["failed"]),
            say("retries.first.took", seconds=r["seconds"]),
        )
        for mode, r in results.items()
    ]


def format_first_checkpoint(results: Mapping[str, Mapping]) -> str:
    grid = format_grid(header(FIRST_COLUMNS), first_checkpoint_rows(results))
    failed = sum(r["failed"] for r in results.values())
    note = "\n" + say("retries.first.failed", failed=failed) if failed else ""
    return f"{grid}\n{say('retries.first.lost')}{note}"


def first_checkpoint_figure(results: Mapping[str, Mapping]) -> object:
    """One bar per mode: how many trials' files held nothing, the input checkpoint, or the
    input and step 0's, when the first node was killed; each part labelled with its count."""
    figure = new_figure((7, 0.9 + 0.55 * len(results)))
    ax = figure.subplots()
    modes = list(results)
    for y, mode in enumerate(modes):
        left = 0
        for word in SAVED:
            count = results[mode]["saved"].get(word, 0)
            if count:
                colour = outcome_colour(SAVED_COLOURS[word])
                ax.barh(y, count, left=left, color=colour, edgecolor="white")
                wide = count >= results[mode]["trials"] / 8
                label = f"{saved_word(word)} {count}" if wide else str(count)
                ax.text(left + count / 2, y, label, ha="center", va="center", fontsize=8)
            left += count
    lost = [say("retries.first.lost_count", lost=results[m]["lost"]) for m in modes]
    ax.set_yticks(range(len(modes)), [f"{m}\n{n}" for m, n in zip(modes, lost, strict=True)])
    ax.invert_yaxis()
    ax.set_xlabel(say("retries.first.held"))
    ax.spines[["top", "right"]].set_visible(False)
    figure.tight_layout()
    return figure


def format_functional(result: Mapping) -> str:
    result = checked(result, ("runs", "lines", "charged_ref"), "run_functional")
    where = say(
        "retries.functional.in_task"
        if result["spec"]["ref_in_task"]
        else "retries.functional.outside"
    )
    lines = [say("retries.functional.made", where=where)]
    lines += [
        f"  {ln['role']:<6} {ln['node']:<10} {ln['phase']:<5} {ln['ref']}" for ln in result["lines"]
    ]
    runs = result["runs"]
    ran = say(
        "retries.functional.ran",
        entrypoint=runs["entrypoint"],
        charge=runs["charge"],
        ship=runs["ship"],
        charged=result["charged_ref"],
        shipped=result["shipped_ref"],
    )
    differ = result["charged_ref"] != result["shipped_ref"]
    lines.append(ran + (say("retries.functional.differ") if differ else ""))
    if result["failure"]:
        lines.append(say("retries.no_outcome", failure=result["failure"]))
    return "\n".join(lines)


def functional_html(result: Mapping) -> str:
    result = checked(result, ("runs", "lines", "charged_ref"), "run_functional")
    rows = [(ln["role"], ln["node"], ln["phase"], ln["ref"]) for ln in result["lines"]]
    differ = result["charged_ref"] != result["shipped_ref"]
    verdict = outcome_word(
        "duplicate" if differ else "consistent",
        say("retries.functional.refs_differ" if differ else "retries.functional.same_ref"),
    )
    charged = say(
        "retries.functional.charged",
        charged=f"<code>{escape(str(result['charged_ref']))}</code>",
        shipped=f"<code>{escape(str(result['shipped_ref']))}</code>",
        verdict=verdict,
    )
    return (
        grid_html(header(FUNCTIONAL_COLUMNS), rows)
        + f"<p>{charged}</p>"
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

    show(grid_html(header(FIRST_COLUMNS), first_checkpoint_rows(results)))
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
                options=list(FIRST_MODES),
                value=list(FIRST_MODES),
                description=say("retries.panel.modes"),
                rows=3,
            )
            self.trials = widgets.IntSlider(
                value=trials,
                min=10,
                max=500,
                step=10,
                description=say("retries.panel.trials"),
                continuous_update=False,
            )
            self.run_button = widgets.Button(
                description=say("retries.panel.run"), button_style="primary", icon="play"
            )
            self.status, self.error_line, self.table = (
                widgets.HTML(),
                widgets.HTML(),
                widgets.HTML(),
            )
            self.figure = picture()
            self.job = BackgroundJob(
                self, [self.run_button], unit=say("retries.panel.unit"), stoppable=True
            )
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
                    held = say("retries.panel.held", saved=saved_word(trial["saved"]))
                    report(done, total, held)

                return first_checkpoint_modes(tuple(modes), trials, progress=advance)

            what = say("retries.panel.running", trials=trials, modes=", ".join(modes))
            self.job.start(what, work, self.show)

        def show(self, results: dict[str, dict]) -> None:
            self.results = results
            self.table.value = grid_html(header(FIRST_COLUMNS), first_checkpoint_rows(results))
            show_picture(self.figure, first_checkpoint_figure(results))

        def click(self) -> None:
            """Same as clicking Run trials (`self.job.wait()` waits for the end)."""
            self.run_button.click()

    return FirstCheckpointPanel


def __getattr__(name: str) -> object:
    """`FirstCheckpointPanel` is made when first asked for (see `panel_class`)."""
    if name == "FirstCheckpointPanel":
        return panel_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
