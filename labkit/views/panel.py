"""The notebook panels: pick, click Run, look. Thin views over labkit's runs and results.

Runs start on a click, never on a value change. A click that takes more than a moment runs
off the kernel's thread (`background.BackgroundJob`: a status line at once, a bar, the Run
button disabled until it ends); a quick one runs in the click, under `shows_errors`. Either
way an error is shown inside the panel, because JupyterLab hides errors raised in widget
callbacks. Each panel keeps what it shows in plain attributes (`result`, `error`, `frames`),
which tests read without a browser (after `panel.job.wait()`).
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable

import ipywidgets as widgets

from labkit.bench.snapshot import Table
from labkit.bench.trace import read_trace
from labkit.language import Messages, say
from labkit.studies.commit_window.history import Frame, rebuild_history
from labkit.studies.commit_window.orders import NO_KILL, ORDERS, get_order
from labkit.studies.commit_window.runs import RunResult, run
from labkit.studies.commit_window.spec import KILL_MODES
from labkit.views.background import BackgroundJob, error_html
from labkit.views.controls import pick_one, run_button
from labkit.views.room_hook import RoomHook, room_defaults
from labkit.views.tables import before_after_html, outcome_badge, row_marks, table_html
from labkit.views.timeline import TimelineFigure

__all__ = ["CrashPanel", "TimelineView"]


def shows_errors(method: Callable) -> Callable:
    """Catch what a quick callback raises and show it in the panel's error line, as a
    `BackgroundJob` does for a long one."""

    @functools.wraps(method)
    def wrapper(self, *args: object) -> None:
        self.error = None
        self.error_line.value = ""
        try:
            method(self, *args)
        except Exception as error:  # shown to the reader, who can act on it
            self.error = error
            self.error_line.value = error_html(error)

    return wrapper


# a trace's roles and events in the reader's words, for the scrubber's caption (panel.toml)
TRACE_ROLES = Messages("panel.role", ("setup", "first", "recovery"))
TRACE_EVENTS = Messages(
    "panel.trace_event",
    ("created", "start", "begin", "commit", "rollback", "point", "kill", "exit", "skip"),
)


class TimelineView(widgets.VBox):
    """A run's timeline with a scrubber: at each trace event, what every file held."""

    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self.figure: TimelineFigure | None = None
        self.columns: dict[str, list[str]] = {}
        self.play = widgets.Play(interval=700, min=0, max=0, description=say("panel.play"))
        self.slider = widgets.IntSlider(
            min=0, max=0, description=say("panel.event"), readout=True, continuous_update=True
        )
        widgets.jslink((self.play, "value"), (self.slider, "value"))
        self.image = widgets.Image(format="png")
        self.caption = widgets.HTML()
        self.state = widgets.HTML()
        self.slider.observe(self._on_frame, names="value")
        super().__init__(
            [widgets.HBox([self.play, self.slider]), self.image, self.caption, self.state]
        )
        self.layout.display = "none"  # nothing to show before the first run
        self.add_class("labkit-timeline")  # CSS hooks for the real-browser test
        self.caption.add_class("labkit-caption")
        self.state.add_class("labkit-state")

    def show(self, result: RunResult) -> None:
        """Load a finished run: rebuild every frame from its trace, checked against the files."""
        events = read_trace(result.run_dir)
        self.frames = rebuild_history(events, result.after)
        self.figure = TimelineFigure(events)
        self.columns = {
            t: tab.columns for tabs in result.after.files.values() for t, tab in tabs.items()
        }
        last = len(self.frames) - 1
        self.layout.display = None
        self.slider.max = self.play.max = last
        if self.slider.value == last:
            self._on_frame({"new": last})
        self.slider.value = last

    def _on_frame(self, change: dict) -> None:
        frame = self.frames[change["new"]]
        self.image.value = self.figure.png(frame.index if frame.event["role"] != "setup" else None)
        e = frame.event
        detail = e.get("file") or e.get("point") or ""
        self.caption.value = say(
            "panel.caption",
            index=frame.index,
            role=f"<b>{TRACE_ROLES.get(e['role'], e['role'])}</b>",
            event=f"<b>{TRACE_EVENTS.get(e['event'], e['event'])}</b>",
            detail=html.escape(str(detail)),
        )
        previous = self.frames[frame.index - 1].rows if frame.index else frame.rows
        self.state.value = self.state_html(frame.rows, previous)

    def state_html(self, rows: dict, previous: dict) -> str:
        """Every file's committed rows at this moment; rows this event changed are marked."""
        parts = []
        for file, tables in rows.items():
            for name, table_rows in tables.items():
                table = Table(self.columns[name], table_rows)
                marks = row_marks(Table(table.columns, previous[file][name]), table)
                parts.append(table_html(f"{file} · {name}", table, marks, by="this_event"))
        return f'<div style="display:flex;flex-wrap:wrap">{"".join(parts)}</div>'


class CrashPanel(widgets.VBox):
    """Order, kill point, kill mode, Run: then the outcome, both files before and after
    recovery, and the timeline to scrub."""

    def __init__(
        self,
        order: str = "effect_first",
        kill_at: str = "effect",
        kill_mode: str = "exit",
        compact: bool = False,
    ) -> None:
        self.result: RunResult | None = None
        self.error: Exception | None = None
        order, kill_at, kill_mode = room_defaults(order, kill_at, kill_mode)
        self.room = RoomHook()  # under the workshop hub only: the prediction to the room
        self.order = pick_one(say("panel.order"), ORDERS, order)
        self.kill_at = widgets.Dropdown(description=say("panel.kill_at"))
        self.kill_mode = widgets.ToggleButtons(
            options=list(KILL_MODES), value=kill_mode, description=say("panel.kill_mode")
        )
        self.run_button = run_button(say("panel.run"))
        self.status = widgets.HTML(say("panel.pick"))
        self.error_line = widgets.HTML()
        self.outcome = widgets.HTML()
        self.tables = widgets.HTML()
        self.timeline = TimelineView()
        self.job = BackgroundJob(self, [self.run_button], unit=say("panel.unit"))
        self.order.observe(self._on_order, names="value")
        self._on_order({"new": order})
        self.kill_at.value = kill_at
        self.run_button.on_click(self._on_run)
        body = (
            [self.outcome, self.timeline] if compact else [self.outcome, self.tables, self.timeline]
        )
        controls = widgets.HBox([self.order, self.kill_at, self.run_button])
        feedback = [self.status, self.job.row, self.error_line]
        super().__init__([controls, self.kill_mode, *self.room.widgets, *feedback, *body])
        self.add_class("labkit-crash-panel")
        self.outcome.add_class("labkit-outcome")

    def _on_order(self, change: dict) -> None:
        """The kill point choices follow the order (no run starts here)."""
        points = [*get_order(change["new"]).kill_points, NO_KILL]
        self.kill_at.options = points
        self.kill_at.value = points[1] if len(points) > 2 else points[0]

    def _on_run(self, _button: widgets.Button | None = None) -> None:
        order, kill_at, mode = self.order.value, self.kill_at.value, self.kill_mode.value
        kill = (
            say("panel.no_kill")
            if kill_at == NO_KILL
            else say("panel.killing_at", point=f"<b>{kill_at}</b>", mode=mode)
        )
        running = say("panel.running", order=f"<b>{order}</b>", kill=kill)
        self.room.before_run(order, kill_at, mode)
        self.job.start(running, lambda _report: run(order, kill_at, mode), self.show)

    def show(self, result: RunResult) -> None:
        self.result = result
        self.room.after_run(result.outcome)
        s = result.summary()
        self.status.value = say(
            "panel.done",
            first=s["first_exit"],
            recovery=s["replay_exit"],
            folder=f"<code>{html.escape(s['run_dir'])}</code>",
        )
        self.outcome.value = f"<p>{outcome_badge(result.outcome, result.failure)}</p>"
        self.tables.value = before_after_html(result)
        self.timeline.show(result)

    def click(self) -> None:
        """Same as clicking Run (for scripts and tests): the run goes on after it returns;
        `self.job.wait()` waits for it."""
        self.run_button.click()
