"""The crash panel in a real browser: JupyterLab on loopback, Debian's Chromium, Playwright.

Opens lesson 1, runs all cells, picks checkpoint_first / checkpoint in the panel, clicks Run,
waits for LOST with done=1 and no receipt, scrubs the timeline, and saves screenshots (and the
click-to-view time) in test-artifacts/. Skipped without /usr/bin/chromium, except in CI.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from labkit.studies.commit_window.orders import NO_KILL, get_order

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "test-artifacts"
TOKEN = "commit-window-lab-test"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
# No news pop-up and no kernel dialog over the page; every cell rendered (no windowing).
# A sweep takes a quarter of a second: too quick for a browser to click Stop while it runs. Each
# kernel of the tests' JupyterLab holds a sweep's runs after its first two while this file exists
# (an IPython start-up script: `HOLD_SWEEPS`); a test makes it, clicks Stop, and removes it.
SWEEP_HOLD: dict[str, Path] = {}  # the file, once the lab runs
HOLD_SWEEPS = """
import os, time
from labkit.studies.commit_window import sweeps

_sweep_execute, _runs_started = sweeps.execute, []


def _held_execute(spec):
    _runs_started.append(spec)
    while len(_runs_started) > 2 and os.path.exists(os.environ["LABKIT_TEST_SWEEP_HOLD"]):
        time.sleep(0.01)
    return _sweep_execute(spec)


sweeps.execute = _held_execute
"""
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension:notification": {"checkForUpdates": False, "fetchNews": "false"},
    "@jupyterlab/notebook-extension:tracker": {
        "windowingMode": "none",
        "autoStartDefaultKernel": True,
    },
}

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists() and not os.environ.get("CI"),
    reason="needs Debian's chromium (apt-get install chromium); CI installs it",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab_url(tmp_path_factory):
    """A private JupyterLab on loopback: own token, port, settings and workspace folders."""
    home = tmp_path_factory.mktemp("jupyter")
    settings = home / "app-settings"
    settings.mkdir()
    (settings / "overrides.json").write_text(json.dumps(LAB_SETTINGS))
    port = free_port()
    served = home / "lab"  # a copy: Lab's autosave and checkpoints never touch the repository
    shutil.copytree(ROOT / "notebooks", served / "notebooks")
    startup = home / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-hold-sweeps.py").write_text(HOLD_SWEEPS)
    env = {
        **os.environ,
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "IPYTHONDIR": str(home / "ipython"),
        "LABKIT_TEST_SWEEP_HOLD": str(home / "hold-sweeps"),
    }
    SWEEP_HOLD["file"] = home / "hold-sweeps"
    env.pop("MPLBACKEND", None)  # the kernel picks its inline backend itself
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        f"--IdentityProvider.token={TOKEN}",
        f"--ServerApp.root_dir={served}",
        f"--LabApp.workspaces_dir={home / 'workspaces'}",
        f"--LabApp.user_settings_dir={home / 'user-settings'}",
        f"--LabApp.app_settings_dir={settings}",
    ]
    with open(home / "lab.log", "wb") as log:
        server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError((home / "lab.log").read_text()[-2000:]) from None
                time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture(scope="module")
def page(lab_url):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 2400})
        yield page
        browser.close()


@pytest.fixture
def shot_on_failure(page, request):
    """Keep a screenshot of the page when the test fails: the first thing to look at."""
    yield
    if request.node.rep_call.failed:
        page.screenshot(path=ARTIFACTS / f"failed-{request.node.name}.png")


def pick_order_and_kill_point(page, panel, order: str, point: str) -> None:
    """Pick a write order in a crash panel, then one of its kill points. The kill points follow
    the order, set by the kernel: wait until the list is that order's whole list before picking
    (a dropdown syncs its index, which would name another point in the old list; effect_first's
    list holds "checkpoint" too, so seeing that name proves nothing)."""
    selects = panel.locator(".widget-dropdown select")
    selects.nth(0).select_option(order)
    names = [*get_order(order).kill_points, NO_KILL]
    page.wait_for_function(
        "([el, names]) => [...el.options].map(o => o.text).join() === names.join()",
        arg=[selects.nth(1).element_handle(), names],
    )
    selects.nth(1).select_option(point)


def run_all(page, lab_url: str, lesson: str, panel_class: str):
    """Open a lesson, Run All as a reader would, and return its panel once the kernel is idle."""
    page.goto(f"{lab_url}/lab/tree/{lesson}?token={TOKEN}&reset")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    kernel_idle = "text=Python 3 (ipykernel) | Idle"
    page.wait_for_selector(kernel_idle, timeout=60_000)  # the kernel is really there
    page.click('.lm-MenuBar-item:has-text("Run")')
    page.click('.lm-Menu-item[data-command="runmenu:run-all"]')
    panel = page.locator(panel_class).last
    panel.wait_for(timeout=120_000)
    page.wait_for_selector(kernel_idle, timeout=120_000)
    # The kernel reads Idle between two cells too: wait until Run All has run every cell, so a
    # click is timed on its own, not behind the cells still queued after the panel's.
    page.wait_for_selector('.jp-Notebook-ExecutionIndicator[data-status="idle"]', timeout=240_000)
    panel.scroll_into_view_if_needed()
    return panel


def wait_until_drawn(page, image) -> None:
    """Wait until a picture (a timeline, a plot) has arrived from the kernel and is drawn."""
    page.wait_for_function("el => el.complete && el.naturalWidth > 0", arg=image.element_handle())


def broken_images(panel) -> int:
    """Pictures shown with nothing in them: a browser draws a broken-image icon for each."""
    return panel.locator("img").evaluate_all(
        "els => els.filter(e => e.offsetParent !== null && !(e.complete && e.naturalWidth > 0))"
        ".length"
    )


def record_timing(name: str, seconds: float) -> None:
    """Keep a click-to-view time in test-artifacts/browser-timing.json, beside the shots."""
    path = ARTIFACTS / "browser-timing.json"
    timings = json.loads(path.read_text()) if path.exists() else {}
    timings[name] = round(seconds, 3)
    path.write_text(json.dumps(timings, indent=1))
    print(f"\n{name}: {seconds * 1000:.0f} ms")


@pytest.mark.timeout(300)
def test_lesson_1_panel_in_a_real_browser(lab_url, page, shot_on_failure):
    panel = run_all(page, lab_url, "notebooks/01_the_commit_window.ipynb", ".labkit-crash-panel")
    page.screenshot(path=ARTIFACTS / "01-panel-ready.png")

    pick_order_and_kill_point(page, panel, "checkpoint_first", "checkpoint")
    started = time.perf_counter()
    panel.locator("button:has-text('Run')").click()
    outcome = panel.locator(".labkit-outcome")
    outcome.locator("text=LOST").wait_for(timeout=30_000)
    wait_until_drawn(page, panel.locator(".labkit-timeline img"))
    record_timing("crash panel: click to updated view (target 1 s)", time.perf_counter() - started)
    page.wait_for_function(
        "el => !el.disabled", arg=panel.locator("button:has-text('Run')").element_handle()
    )  # enabled again after the run
    text = panel.inner_text()
    after = text.split("After recovery")[1]
    assert "done=1, receipts=0" in after and "(no rows)" in after
    panel.screenshot(path=ARTIFACTS / "02-lost.png")

    timeline = panel.locator(".labkit-timeline")
    caption = timeline.locator(".labkit-caption")
    state = timeline.locator(".labkit-state")
    last_caption, last_state = caption.inner_text(), state.inner_text()
    handle = timeline.locator(".noUi-handle").first
    handle.focus()
    handle.press("Home")  # back to the first event: the files as they were created
    for element, old in ((caption, last_caption), (state, last_state)):  # each redrawn on its own
        page.wait_for_function(
            "([el, old]) => el.innerText !== old", arg=[element.element_handle(), old]
        )
    assert "event 0" in caption.inner_text()
    assert state.inner_text() != last_state
    assert "0" in state.inner_text().split("progress")[1].split("effect.db")[0]
    timeline.screenshot(path=ARTIFACTS / "03-timeline-scrubbed.png")


@pytest.mark.timeout(400)
def test_lesson_4_the_24_kill_matrix_from_the_widgets(lab_url, page, shot_on_failure):
    lesson = "notebooks/04_durability_under_sigkill.ipynb"
    panel = run_all(page, lab_url, lesson, ".labkit-durability-panel")
    started = time.perf_counter()
    panel.locator("button:has-text('Run trials')").click()
    panel.locator("text=Done: 24 kills").wait_for(timeout=120_000)  # the job's last line
    wait_until_drawn(page, panel.locator(".labkit-distribution"))
    panel.locator("text=as the kill left it").wait_for(timeout=60_000)
    seconds = time.perf_counter() - started
    record_timing("durability panel: click to the 24-kill distribution", seconds)
    text = panel.inner_text()
    assert text.count("nothing to resume: the run is lost") == 8  # exit mode, both graphs
    panel.screenshot(path=ARTIFACTS / "04-matrix.png")


@pytest.mark.timeout(300)
def test_lesson_5_the_call_panel_in_a_real_browser(lab_url, page, shot_on_failure):
    lesson = "notebooks/05_the_unknown_outcome.ipynb"
    panel = run_all(page, lab_url, lesson, ".labkit-call-panel")
    assert broken_images(panel) == 0  # before its first run: no picture, no icon
    selects = panel.locator(".widget-dropdown select")
    selects.nth(0).select_option("new_key")
    selects.nth(1).select_option("reply_lost")
    started = time.perf_counter()
    panel.locator("button:has-text('Run')").click()
    panel.locator("text=DUPLICATE").wait_for(timeout=30_000)
    wait_until_drawn(page, panel.locator("img"))
    record_timing("call panel: click to the outcome and timeline", time.perf_counter() - started)
    text = panel.inner_text()
    assert "info" in text and "job-17:open-ticket:v1" in text  # the Jepsen column, the service
    panel.screenshot(path=ARTIFACTS / "05-call-duplicate.png")


@pytest.mark.timeout(300)
def test_lesson_6_the_lease_panel_in_a_real_browser(lab_url, page, shot_on_failure):
    lesson = "notebooks/06_two_workers_one_task.ipynb"
    panel = run_all(page, lab_url, lesson, ".labkit-lease-panel")
    assert broken_images(panel) == 0
    panel.locator(".widget-dropdown select").first.select_option("lease")  # no fence
    started = time.perf_counter()
    panel.locator("button:has-text('Run')").click()
    panel.locator("text=LOST UPDATE").wait_for(timeout=30_000)
    wait_until_drawn(page, panel.locator("img"))
    record_timing("lease panel: click to the outcome and timeline", time.perf_counter() - started)
    text = panel.inner_text()
    assert "token 33, write applied" in text and "token 34, write applied" in text
    panel.screenshot(path=ARTIFACTS / "06-lease-lost-update.png")


@pytest.mark.timeout(300)
def test_start_page_sweep_moves_its_bar_and_stops_in_a_real_browser(lab_url, page, shot_on_failure):
    panel = run_all(page, lab_url, "notebooks/00_start_here.ipynb", ".labkit-sweep-panel")
    panel.locator(".widget-select-multiple select").select_option(["exit", "sigkill"])
    hold = SWEEP_HOLD["file"]
    hold.touch()  # its runs after the first two wait until Stop is clicked
    started = time.perf_counter()
    panel.locator("button:has-text('Run sweep')").click()
    panel.locator("text=/Sweeping every order|\\d+\\/24:/").wait_for(timeout=10_000)
    first_feedback = time.perf_counter() - started
    record_timing("sweep panel: click to its status line (target 1 s)", first_feedback)
    bar = panel.locator(".labkit-job .progress-bar")
    page.wait_for_function(  # the bar moves while the kernel's thread is free
        "el => parseFloat(el.style.width) > 0", arg=bar.element_handle(), timeout=30_000
    )
    panel.screenshot(path=ARTIFACTS / "00-sweep-running.png")
    panel.locator(".labkit-stop").click()
    hold.unlink()
    panel.locator("text=Stopped after").wait_for(timeout=60_000)
    text = panel.inner_text()
    assert "of 24 runs: every process the run started has been killed and reaped" in text
    assert float(bar.evaluate("el => parseFloat(el.style.width)")) < 100  # stopped midway
    page.wait_for_function(  # Run sweep is enabled again, Stop is not
        "([run, stop]) => !run.disabled && stop.disabled",
        arg=[
            panel.locator("button:has-text('Run sweep')").element_handle(),
            panel.locator(".labkit-stop").element_handle(),
        ],
    )
    assert first_feedback < 1.0
    panel.screenshot(path=ARTIFACTS / "00-sweep-stopped.png")


@pytest.mark.timeout(300)
def test_chinese_lesson_1_panel_speaks_chinese_in_a_real_browser(lab_url, page, shot_on_failure):
    """The Chinese edition's lesson 1, Run All: the same panel with Chinese labels, a run killed
    at checkpoint reads 丢失 (LOST), and the timeline picture is drawn."""
    lesson = "notebooks/zh/01_the_commit_window.ipynb"
    panel = run_all(page, lab_url, lesson, ".labkit-crash-panel")
    pick_order_and_kill_point(page, panel, "checkpoint_first", "checkpoint")
    panel.locator("button:has-text('运行')").click()
    panel.locator(".labkit-outcome").locator("text=丢失").wait_for(timeout=30_000)
    wait_until_drawn(page, panel.locator(".labkit-timeline img"))
    text = panel.inner_text()
    assert "写入顺序" in text and "强杀点" in text
    assert "kill at" not in text and "Run" not in text
    panel.screenshot(path=ARTIFACTS / "zh-01-lost.png")
