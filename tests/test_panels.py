"""The notebook panels, driven without a browser: set values, click, read what they show.

A click that takes more than a moment runs off the kernel's thread: a test clicks, then waits
for the panel's job (`panel.job.wait()`) before it reads what the panel shows."""

from __future__ import annotations

import os
import re
import threading
import time
from types import SimpleNamespace

import pytest

import labkit as lk
from labkit.bench import fork_server, launcher
from labkit.views.panel import CrashPanel
from labkit.views.step_panel import StepPanel
from labkit.views.sweep_panel import SweepPanel
from tests.conftest import children_of, forks_of


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
    assert panel.status.value.startswith("Running <b>checkpoint_first</b>, killing at")  # at once
    assert panel.run_button.disabled and panel.job.stop_button.layout.display == "none"
    panel.job.wait()
    assert panel.error is None and not panel.run_button.disabled
    assert panel.result.outcome == "lost"
    assert "LOST" in panel.outcome.value
    after = panel.tables.value.split("After recovery")[1]
    assert "done=1, receipts=0" in after and "(no rows)" in after


def test_timeline_frames_step_through_the_files_states():
    panel = CrashPanel(order="effect_first", kill_at="effect", kill_mode="sigkill")
    panel.click()
    panel.job.wait()
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
    panel.job.wait()
    assert isinstance(panel.error, OSError) and "disk full" in panel.error_line.value
    assert "\n" not in panel.error_line.value and "Traceback" not in panel.error_line.value
    assert panel.status.value.startswith("Failed after")
    assert not panel.run_button.disabled  # enabled again after the job
    monkeypatch.undo()  # the panels' thread lives on: the next click runs for real
    panel.click()
    panel.job.wait()
    assert panel.error is None and panel.error_line.value == "" and panel.result is not None


def test_step_panel_kill_and_recover():
    panel = StepPanel("effect_first")
    assert panel.continue_button.disabled and panel.recover_button.disabled
    panel.start_button.click()
    assert "Paused at <b>start</b>" in panel.status.value
    panel.continue_button.click()
    assert "Paused at <b>effect</b>" in panel.status.value
    assert "job-17:save-report:v1" in panel.files.value  # read live, mid-run
    panel.kill_button.click()
    assert not panel.recover_button.disabled and panel.kill_button.disabled
    panel.recover_button.click()
    assert panel.start_button.disabled and panel.recover_button.disabled  # while it recovers
    panel.job.wait()
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
    panel.job.wait()
    assert panel.error is None and not panel.order.disabled
    panel.order.value = "atomic"
    panel.start_button.click()
    assert panel.session.order.name == "atomic" and panel.order.disabled
    panel.session.close()


def test_sweep_panel_fills_the_matrix_and_the_bar():
    panel = SweepPanel()
    panel.modes.value = ("exit",)
    panel.click()
    panel.job.wait()
    assert panel.error is None
    assert panel.progress.value == panel.progress.max == len(panel.results) == 12
    matrix = panel.matrix.value
    assert matrix.count("<b>duplicate</b>") == 1 and matrix.count("<b>lost</b>") == 1


def test_durability_panel_runs_trials_and_decodes_the_last_checkpoint_file():
    from labkit.views.durability_panel import DurabilityPanel

    panel = DurabilityPanel(trials=1)
    assert panel.plot.layout.display == "none"
    assert panel.graphs.value == ("linear", "parallel")  # the study's matrix, by default
    panel.graphs.value = ("linear",)
    panel.modes.value = ("sync", "exit")
    panel.click()
    panel.job.wait()
    assert panel.error is None and not panel.run_button.disabled
    assert [t.spec.mode for t in panel.trials] == ["sync", "exit"]
    assert panel.progress.value == panel.progress.max == 2
    assert panel.plot.value[:4] == b"\x89PNG" and panel.plot.layout.display is None
    assert "nothing to resume: the run is lost" in panel.table.value
    assert "(exit) as the kill left it" in panel.checkpoints.value


def test_interrupt_panel_kill_needs_a_new_process_and_shows_the_tickets():
    from labkit.views.interrupt_resume import InterruptPanel

    panel = InterruptPanel()
    assert panel.kill_at.disabled
    panel.process.value = True  # resume in a new process
    panel.kill_at.value = "after_create"
    panel.key.value = "fresh"
    panel.click()
    assert panel.status.value.startswith("Running key <b>fresh</b>")  # before the server starts
    panel.job.wait()
    assert panel.error is None and panel.result["after_resume"] == 3
    assert "3 TICKETS" in panel.output.value
    assert "invoke(None), then Command(resume=True)" in panel.output.value  # no interrupt saved
    panel.process.value = False  # resume in the same process
    assert panel.kill_at.value == "none" and panel.kill_at.disabled


def running_workers() -> list[int]:
    """The study-000 workers running now, this process's or its fork servers' children, read
    from /proc: a worker writes its stdout to its role's file in its run folder."""
    parents = [os.getpid(), *fork_server.server_pids()]
    found = []
    for pid in (child for parent in parents for child in children_of(parent)):
        try:
            stdout = os.readlink(f"/proc/{pid}/fd/1")
        except OSError:
            continue
        if stdout.endswith(("/first.stdout", "/recovery.stdout")):
            found.append(pid)
    return found


def wait_until(condition, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the panel's job did not get there in time"
        time.sleep(0.01)


def test_a_sweep_runs_off_the_kernels_thread_and_moves_the_bar(monkeypatch):
    from labkit.views import sweep_panel

    calls = []
    real_sweep = sweep_panel.sweep

    def counted_sweep(*args, **kwargs):
        calls.append(threading.current_thread().name)
        return real_sweep(*args, **kwargs)

    monkeypatch.setattr(sweep_panel, "sweep", counted_sweep)
    panel = sweep_panel.SweepPanel()
    panel.modes.value = ("exit", "sigkill")  # 24 runs: seconds of work
    seen = []
    panel.progress.observe(lambda change: seen.append(change["new"]), names="value")
    started = time.monotonic()
    panel.click()
    assert time.monotonic() - started < 1.0  # the click returns while the sweep goes on
    assert panel.job.running and panel.results == []
    assert panel.status.value.startswith("Sweeping every order")  # said within the click
    assert panel.run_button.disabled and not panel.job.stop_button.disabled
    panel.click()  # a second click while it runs starts nothing
    panel.job.wait()
    assert calls == ["labkit-panels"]  # one sweep, on the panels' thread
    assert panel.error is None and len(panel.results) == 24
    assert panel.progress.value == panel.progress.max == 24
    assert len(set(seen)) > 5 and max(seen) == 24  # the bar moved as runs ended
    assert panel.progress.bar_style == "success" and panel.status.value.startswith(
        "Done: 24 runs in"
    )
    assert not panel.run_button.disabled and panel.job.stop_button.disabled


def test_stop_during_a_sweep_kills_and_reaps_every_worker(monkeypatch):
    from labkit.studies.commit_window import sweeps
    from labkit.views.sweep_panel import SweepPanel

    # A sweep takes a quarter of a second: its runs after the first two wait for the click, so
    # that Stop lands while they run, however busy the machine.
    clicked, started, real_execute = threading.Event(), [], sweeps.execute

    def execute_after_two(spec):
        started.append(spec)
        if len(started) > 2:
            clicked.wait(30)
        return real_execute(spec)

    monkeypatch.setattr(sweeps, "execute", execute_after_two)
    panel = SweepPanel()
    panel.modes.value = ("exit", "sigkill")
    before = set(launcher._LIVE)  # another test of this process may hold a paused worker
    panel.click()
    wait_until(lambda: panel.progress.value >= 2)
    panel.job.stop_button.click()
    clicked.set()
    assert panel.status.value.startswith("Stopping")  # said at once, within the click
    panel.job.wait()
    assert panel.job.stopped and panel.error is None
    assert panel.status.value.startswith("Stopped after")
    assert "killed and reaped" in panel.status.value
    assert panel.progress.value < 24 and panel.progress.bar_style == "warning"
    assert running_workers() == [] and not launcher._LIVE - before  # none of the sweep's left
    assert panel.results == [] and not panel.run_button.disabled
    # the matrix holds the runs that finished (one may have ended as Stop was clicked), said
    # partial: never the previous sweep's, nor a whole one
    finished = int(re.search(r"<b>(\d+) of 24 runs</b> finished so far", panel.matrix.value)[1])
    assert panel.progress.value <= finished < 24
    assert panel.matrix.value.count("<td ") == finished
    panel.modes.value = ("exit",)
    panel.click()  # and the next sweep runs whole
    panel.job.wait()
    assert len(panel.results) == 12 and not panel.job.stopped


def test_stop_during_a_matrix_interrupts_the_trial_server_and_the_next_run_is_whole():
    from labkit.bench import server, spares
    from labkit.views.durability_panel import DurabilityPanel

    stepping = StepPanel("effect_first")  # on the same page, paused at a kill point meanwhile
    stepping.start_button.click()
    panel = DurabilityPanel(trials=4)  # 24 kills in the trial server
    panel.click()
    wait_until(lambda: panel.progress.value >= 2, seconds=120)
    panel.job.stop()
    panel.job.wait()
    assert panel.job.stopped and panel.error is None and panel.trials == []
    assert panel.status.value.startswith("Stopped after") and panel.progress.value < 24
    trial_server = server._server.process.pid
    assert len(forks_of(trial_server)) <= spares.KEPT  # no worker left: spares only
    stepping.continue_button.click()  # Stop killed the matrix's workers, not this one
    assert stepping.error is None and "Paused at <b>effect</b>" in stepping.status.value
    stepping.session.close()
    panel.count.value = 1
    panel.click()  # the server answers the next call in step
    panel.job.wait()
    assert panel.error is None and len(panel.trials) == 6
    assert server._server.process.pid == trial_server  # the same server: it lived on


def test_an_error_in_a_sweep_is_one_line_in_the_panel(monkeypatch):
    from labkit.views import sweep_panel

    first = lk.run("effect_first", "effect", "exit")

    def failing(modes, progress):
        progress(1, 12, first)
        raise OSError("No space left on device")

    monkeypatch.setattr(sweep_panel, "sweep", failing)
    panel = sweep_panel.SweepPanel()
    panel.click()
    panel.job.wait()
    assert isinstance(panel.error, OSError)
    assert panel.error_line.value.count("No space left on device") == 1
    assert "\n" not in panel.error_line.value and panel.progress.bar_style == "danger"
    assert panel.status.value.startswith("Failed after") and not panel.run_button.disabled


def test_a_second_panels_job_waits_its_turn_and_can_be_stopped_before_it_starts():
    from labkit.views.sweep_panel import SweepPanel

    first, second = SweepPanel(), SweepPanel()
    first.click()
    second.click()
    assert "waiting for another panel's run to end" in second.status.value
    second.job.stop()
    first.job.wait()
    second.job.wait()
    assert second.job.stopped and second.status.value == "Stopped before it started."
    assert len(first.results) == 12 and second.results == []


def test_a_panels_job_and_a_cell_at_once_start_one_trial_server(monkeypatch):
    """A panel's job calls the trial server from the panels' thread while a cell may call it
    from the kernel's: the first call of both must start one server, not two."""
    from labkit.bench import server

    started = []

    class SlowToStart:
        def __init__(self, kind="trial"):
            started.append(self)
            time.sleep(0.3)  # as a real server takes its time to import LangGraph
            self.process = SimpleNamespace(poll=lambda: None)

        def call(self, function, kwargs, progress):
            return function

    monkeypatch.setattr(server, "_server", None)
    monkeypatch.setattr(server, "Server", SlowToStart)
    answers = []
    threads = [
        threading.Thread(target=lambda: answers.append(server.call("m:f"))) for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == ["m:f", "m:f"] and len(started) == 1


def test_call_panel_says_what_runs_at_once_then_shows_the_outcome():
    from labkit.views.unknown_outcome import CallPanel

    panel = CallPanel(strategy="new_key", fault="reply_lost")
    assert panel.image.layout.display == "none"  # no picture yet: no broken-image icon
    panel.click()
    assert panel.status.value.startswith("Running <b>new_key</b> under <b>reply_lost</b>")
    panel.job.wait()
    assert panel.error is None and panel.result.outcome == "duplicate"
    assert "DUPLICATE" in panel.tables.value and panel.image.value[:4] == b"\x89PNG"
    assert panel.image.layout.display is None
    assert panel.status.value.startswith("Done. Folder:")
