"""Lesson 6's panel: pick a claim method, a pause and a lease, run one race off the kernel's
thread, read the outcome, the files and the timeline."""

from __future__ import annotations

from html import escape

from labkit.language import say
from labkit.studies.leases.experiment import ClaimResult, run_claim
from labkit.studies.leases.spec import METHODS, ClaimSpec
from labkit.views.figures import picture, show_picture
from labkit.views.leases_race import claim_html, timeline_figure


class LeasePanel:
    """Method, pause, lease, Run: then the outcome, the files and the timeline. A run starts on
    a click only, and runs off the kernel's thread (`background.BackgroundJob`: the race holds
    w1 frozen for its pause). Display it as the last line of a cell (it shows its widgets)."""

    def __init__(self, method: str = "lease_with_fence", pause_ms: int = 300, lease_ms: int = 200):
        import ipywidgets as widgets

        from labkit.views.background import BackgroundJob
        from labkit.views.controls import pick_one, run_button, slider

        ClaimSpec(method, pause_ms, lease_ms)  # bad input: one line, before any widget
        self.result: ClaimResult | None = None
        self.error: Exception | None = None
        self.method = pick_one(say("leases.panel.method"), METHODS, method)
        self.pause = slider(say("leases.panel.pause"), pause_ms, 0, 600, step=50)
        self.lease = slider(say("leases.panel.lease"), lease_ms, 50, 600, step=50)
        self.run_button = run_button(say("leases.panel.run"))
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
