"""The notebook panels, driven without a browser: set values, click, read what they show."""

from __future__ import annotations

import pytest

from labkit.views.panel import CrashPanel
from labkit.views.step_panel import StepPanel
from labkit.views.sweep_panel import SweepPanel


@pytest.fixture(autouse=True)
def headless_matplotlib(monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")


def test_kill_points_follow_the_order_and_changing_them_runs_nothing():
    panel = CrashPanel()
    panel.order.value = "atomic"
    assert panel.kill_at.options == ("start", "in_transaction", "committed", "none")
    panel.kill_at.value = "committed"
    panel.kill_mode.value = "sigkill"
    assert panel.result is None


def test_run_shows_lost_with_done_1_and_no_receipt():
    panel = CrashPanel()
    panel.order.value = "checkpoint_first"
    panel.kill_at.value = "checkpoint"
    panel.click()
    assert panel.error is None and not panel.run_button.disabled
    assert panel.result.outcome == "lost"
    assert "LOST" in panel.outcome.value
    after = panel.tables.value.split("After recovery")[1]
    assert "done=1, receipts=0" in after and "(no rows)" in after


def test_timeline_frames_step_through_the_files_states():
    panel = CrashPanel(order="effect_first", kill_at="effect", kill_mode="sigkill")
    panel.click()
    frames = panel.timeline.frames
    assert panel.timeline.slider.max == len(frames) - 1 == panel.timeline.slider.value
    first_commit = next(f.index for f in frames if f.event["event"] == "commit")
    panel.timeline.slider.value = first_commit - 1
    assert "(no rows)" in panel.timeline.state.value
    shown_before = panel.timeline.image.value
    panel.timeline.slider.value = first_commit
    assert "job-17:save-report:v1" in panel.timeline.state.value
    assert "added by this event" in panel.timeline.state.value
    assert panel.timeline.image.value != shown_before  # the cursor moved
    assert panel.timeline.image.value[:4] == b"\x89PNG"


def test_errors_are_shown_inside_the_panel(monkeypatch):
    panel = CrashPanel()

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("labkit.views.panel.run", broken)
    panel.click()
    assert isinstance(panel.error, OSError) and "disk full" in panel.error_line.value
    assert not panel.run_button.disabled  # enabled again in `finally`


def test_step_panel_kill_and_recover():
    panel = StepPanel("effect_first")
    assert panel.continue_button.disabled and panel.recover_button.disabled
    panel.start_button.click()
    assert "Paused at <b>start</b>" in panel.where.value
    panel.continue_button.click()
    assert "Paused at <b>effect</b>" in panel.where.value
    assert "job-17:save-report:v1" in panel.files.value  # read live, mid-run
    panel.kill_button.click()
    assert not panel.recover_button.disabled and panel.kill_button.disabled
    panel.recover_button.click()
    assert panel.error is None
    assert panel.session.result.outcome == "duplicate"
    assert panel.session.result.first.exit_code == -9
    assert panel.timeline.frames


def test_step_panel_keeps_its_order_from_start_until_recover():
    panel = StepPanel("effect_first")
    assert not panel.order.disabled
    panel.start_button.click()
    assert panel.order.disabled  # the panel must not name an order the worker is not running
    panel.kill_button.click()
    assert panel.order.disabled and not panel.start_button.disabled
    panel.recover_button.click()
    assert panel.error is None and not panel.order.disabled
    panel.order.value = "atomic"
    panel.start_button.click()
    assert panel.session.order.name == "atomic" and panel.order.disabled
    panel.session.close()


def test_sweep_panel_fills_the_matrix_and_the_bar():
    panel = SweepPanel()
    panel.modes.value = ("exit",)
    panel.click()
    assert panel.error is None
    assert panel.progress.value == panel.progress.max == len(panel.results) == 12
    matrix = panel.matrix.value
    assert matrix.count("<b>duplicate</b>") == 1 and matrix.count("<b>lost</b>") == 1


def test_durability_panel_runs_trials_and_decodes_the_last_checkpoint_file():
    from labkit.views.durability_panel import DurabilityPanel

    panel = DurabilityPanel(trials=1)
    assert panel.graphs.value == ("linear", "parallel")  # the study's matrix, by default
    panel.graphs.value = ("linear",)
    panel.modes.value = ("sync", "exit")
    panel.click()
    assert panel.error is None and not panel.run_button.disabled
    assert [t.spec.mode for t in panel.trials] == ["sync", "exit"]
    assert panel.progress.value == panel.progress.max == 2
    assert panel.plot.value[:4] == b"\x89PNG"
    assert "nothing to resume: the run is lost" in panel.table.value
    assert "(exit) as the kill left it" in panel.checkpoints.value


def test_interrupt_panel_kill_needs_a_new_process_and_shows_the_tickets():
    from labkit.views.interrupt_resume import InterruptPanel

    panel = InterruptPanel()
    assert panel.kill_at.disabled
    panel.process.value = "new process"
    panel.kill_at.value = "after_create"
    panel.key.value = "fresh"
    panel.click()
    assert panel.error is None and panel.result["after_resume"] == 3
    assert "3 TICKETS" in panel.output.value
    assert "invoke(None), then Command(resume=True)" in panel.output.value  # no interrupt saved
    panel.process.value = "same process"
    assert panel.kill_at.value == "none" and panel.kill_at.disabled
