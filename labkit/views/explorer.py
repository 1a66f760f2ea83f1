"""Lesson 9's views: the explorer's matrix as an HTML table, and a panel to pick a failing
crash point, see the timeline of its run and replay it in step mode (a step's).

Results only: the panel reads the exploration and its run folders, and steps through a replay
with the explorer's own step session; it never reaches into a worker.
"""

from __future__ import annotations

import json
from html import escape

import ipywidgets as widgets

from labkit.bench.trace import read_trace
from labkit.language import say
from labkit.studies.explorer.replays import CHECKER_RAISED
from labkit.studies.explorer.report import Exploration, PointResult
from labkit.studies.explorer.stepping import ExplorerStepSession
from labkit.views.explorer_lines import point_line
from labkit.views.explorer_words import (
    complaint_words,
    crash_after,
    failed_words,
    outcome_word,
    point_label,
    run_folder,
    what_is_wrong,
)
from labkit.views.palette import outcome_colour
from labkit.views.panel import shows_errors
from labkit.views.timeline import TimelineFigure

__all__ = ["ExplorerPanel", "matrix_html"]


NOWRAP = 'style="white-space:nowrap"'  # a heading or a point's label on one line ("无崩溃")


def outcome_cell(outcome: str) -> str:
    """The outcome's word on its colour: never colour alone."""
    colour = outcome_colour(outcome)
    word = escape(outcome_word(outcome))
    style = f"color:white;background:{colour};padding:1px 6px;white-space:nowrap"  # one line
    return f'<b style="{style}">{word}</b>'


def matrix_html(exploration: Exploration) -> str:
    """Every crash point: what was made durable there, the reader's line, the outcome of a
    crash there, what the checker said, and the run folder that shows it."""
    rows = []
    for p in exploration.points:
        rows.append(
            f"<tr><td {NOWRAP}>{escape(point_label(p))}</td><td>{escape(crash_after(p))}</td>"
            f"<td>{f'<code>{escape(p.where)}</code>' if p.where else ''}</td>"  # no empty box
            f"<td>{outcome_cell(p.outcome)}"
            f"{escape(say('explorer.report.varies')) if p.varies else ''}</td>"
            f"<td>{escape(what_is_wrong(p))}</td>"
            f"<td><small><code>{escape(run_folder(p))}</code></small></td></tr>"
        )
    names = ("report.point", "report.crash_after", "matrix.your_line", "report.outcome")
    names += ("matrix.what_is_wrong", "matrix.run_folder")
    head = "".join(f"<th {NOWRAP}>{escape(say(f'explorer.{name}'))}</th>" for name in names)
    caption = escape(exploration.summary())
    return (
        f'<table class="labkit-explorer"><caption style="text-align:left">{caption}</caption>'
        f"<tr>{head}</tr>{''.join(rows)}</table>"
    )


def timeline_png(point: PointResult) -> bytes:
    """The timeline of a point's run: the worker that died there, and the recovery."""
    return TimelineFigure(with_last_commits(read_trace(point.run_dir))).png(None)


def with_last_commits(events: list[dict]) -> list[dict]:
    """The trace, with the commit a worker died right after: the explorer kills it the moment
    the commit is seen, before the store notes it, so the crash point says it instead. A kill
    names its crash point in the reader's language (the gate's name for it is a code)."""
    shown: list[dict] = []
    at: dict[str, str] = {}  # each role's last crash point
    for i, e in enumerate(events):
        if e["event"] == "point" and "n" in e:
            at[e["role"]] = say("explorer.matrix.crash_point", n=e["n"])
        if e["event"] == "kill" and e["role"] in at:
            e = {**e, "point": at[e["role"]]}
        shown.append(e)
        if e["event"] == "point" and e.get("op") == "commit":
            later = (x for x in events[i + 1 :] if x["role"] == e["role"])
            noted = next((x for x in later if x.get("file") == e["detail"]), None)
            if noted is None or noted["event"] != "commit":
                killed = [{"table": say("explorer.matrix.killed_after_commit")}]  # "COMMIT ..."
                shown.append({**e, "event": "commit", "file": e["detail"], "writes": killed})
    return shown


class ExplorerPanel(widgets.VBox):
    """The matrix; pick a point to see its run's timeline, or replay it in step mode."""

    def __init__(self, exploration: Exploration) -> None:
        self.exploration = exploration
        self.session: ExplorerStepSession | None = None
        self.error: Exception | None = None
        choices = [(point_line(p), p.n) for p in explored(exploration)]
        failing = [n for _, n in choices if exploration.point(n).outcome != "consistent"]
        self.pick = widgets.Dropdown(
            options=choices,
            value=(failing or [n for _, n in choices])[0],
            description=say("explorer.panel.point"),
        )
        self.timeline_button = labelled_button("timeline", icon="line-chart")
        self.step_button = labelled_button("step", icon="step-forward")
        self.kill_button = labelled_button("kill", button_style="danger")
        self.next_button = labelled_button("next", icon="forward")
        self.recover_button = labelled_button("recover", button_style="success")
        self.status = widgets.HTML()
        self.error_line = widgets.HTML()
        self.files = widgets.HTML()
        self.image = widgets.Image(format="png")
        self.image.layout.display = "none"
        self.timeline_button.on_click(self._on_timeline)
        self.step_button.on_click(self._on_step)
        self.next_button.on_click(self._on_next)
        self.kill_button.on_click(self._on_kill)
        self.recover_button.on_click(self._on_recover)
        steps = [self.step_button, self.next_button, self.kill_button, self.recover_button]
        if exploration.kind != "step":  # a graph's workers are the trial server's forks
            for button in steps:
                button.layout.display = "none"
        super().__init__(
            [
                widgets.HTML(matrix_html(exploration)),
                widgets.HBox([self.pick, self.timeline_button, *steps]),
                self.status,
                self.error_line,
                self.files,
                self.image,
            ]
        )
        self._enable()

    def _enable(self) -> None:
        paused = self.session is not None and not self.session.finished
        self.next_button.disabled = self.kill_button.disabled = not paused
        done = self.session is None or self.session.result is not None
        self.recover_button.disabled = done or paused

    @shows_errors
    def _on_timeline(self, _button: object = None) -> None:
        point = self.exploration.point(self.pick.value)
        self.image.value = timeline_png(point)
        self.image.layout.display = None
        self.status.value = say(
            "explorer.panel.run_of", label=escape(point_label(point)), folder=point.run_dir
        )

    @shows_errors
    def _on_step(self, _button: object = None) -> None:
        if self.session is not None:
            self.session.close()
        self.session = ExplorerStepSession(self.exploration)
        if self.pick.value is not None:
            self.session.run_to(self.pick.value)
        self._show_stop()

    @shows_errors
    def _on_next(self, _button: object = None) -> None:
        self.session.proceed()
        self._show_stop()

    @shows_errors
    def _on_kill(self, _button: object = None) -> None:
        point = self.session.point  # the row it is paused at (kill() returns its gate name)
        self.session.kill()
        self.status.value = say("explorer.panel.killed", n=point.n)
        self._enable()

    @shows_errors
    def _on_recover(self, _button: object = None) -> None:
        result = self.session.recover()
        complaint, outcome = result.get("complaint"), result.get("outcome", "failed")
        said = complaint_words(result.get("finding"), complaint, outcome)
        if "checker_error" in result:  # the reader's error, quoted as it is
            said = failed_words({"code": CHECKER_RAISED, "error": result["checker_error"]})
        outcome = outcome_cell(outcome)
        self.status.value = say("explorer.panel.after", outcome=outcome, said=escape(said))
        self.files.value = state_html(result.get("after", {}))
        self.session.close()
        self._enable()

    def _show_stop(self) -> None:
        point = self.session.point
        if point is None:
            self.status.value = say("explorer.panel.ran_to_end")
        else:
            self.status.value = say(
                "explorer.panel.paused",
                what=escape(crash_after(point)),
                where=escape(point.where or ""),
                n=point.n,
            )
            self.files.value = state_html(self.session.state())
        self._enable()


def labelled_button(name: str, **style: str) -> widgets.Button:
    """A panel button, labelled in the reader's language (explorer.toml's [panel])."""
    return widgets.Button(description=say(f"explorer.panel.{name}"), **style)


def explored(exploration: Exploration) -> list[PointResult]:
    return [p for p in exploration.points if p.n is not None]


def state_html(state: dict) -> str:
    """What a run folder holds: each file's tables (or lines), as compact text; a file neither
    SQLite nor text, as not read."""
    parts = []
    for file, content in state.items():
        if isinstance(content, dict):
            tables = "; ".join(f"{t}: {json.dumps(rows)}" for t, rows in content.items())
            parts.append(f"<b>{escape(file)}</b> {escape(tables)}")
        elif isinstance(content, str):
            parts.append(f"<b>{escape(file)}</b> {escape(say('explorer.panel.unread'))}")
        else:
            parts.append(f"<b>{escape(file)}</b> {say('explorer.panel.lines', count=len(content))}")
    return "<br>".join(parts)
