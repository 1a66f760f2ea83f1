"""Every lesson's timeline, drawn from real runs in English and in Chinese (issue 29, item 1):
no two words the renderer draws overlap, none leaves the figure, a label leaves no axes, and
no text is under 9 pt at the figure's own width (800 px: a notebook's output area shows it
unscaled). One palette: a meaning has one colour in every lesson."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

import labkit as lk
from labkit.bench.trace import read_trace
from labkit.language import set_language
from labkit.studies.explorer.replay import explore
from labkit.studies.postgres.experiment import run_window
from labkit.views.explorer import with_last_commits
from labkit.views.figures import DPI
from labkit.views.leases import timeline_figure as claim_figure
from labkit.views.outbox import outbox_timeline
from labkit.views.timeline import TimelineFigure
from labkit.views.unknown_outcome import timeline_figure as call_figure

NOTEBOOK_PX = 800  # the figures' width: no wider, or a notebook scales them and their words down


@pytest.fixture(scope="module")
def runs():
    """The runs whose timelines the lessons draw, once (a run does not depend on the language)."""
    return {
        "01 repeated": lk.run("effect_first", "effect"),
        "01 lost": lk.run("checkpoint_first", "checkpoint"),
        "02 inside": lk.run("atomic", kill_at="in_transaction"),
        "02 retried": lk.run("idempotent", kill_at="effect"),
        "05 gave up": lk.run_call("give_up", "reply_lost"),
        "05 new key": lk.run_call("new_key", "reply_lost"),
        "05 caller killed": lk.run_call("reconcile", "caller_killed"),
        "05 still working": lk.run_call("reconcile", "still_working"),
        "05 service killed": lk.run_call("give_up", "service_killed"),
        "05 outbox": lk.run_outbox("plain", kill_at="after_deliver"),
        "05 outbox dedupe": lk.run_outbox("dedupe", kill_at="after_deliver"),
        "06 late": lk.run_claim("lease", pause_ms=300, lease_ms=200),
        "06 fenced": lk.run_claim("lease_with_fence", pause_ms=300, lease_ms=200),
        "06 by name": lk.run_claim("renew_by_name", pause_ms=300, lease_ms=200),
        "07 postgres": run_window("effect_first", "effect"),
        "09 explorer": explore("labkit.studies.commit_window.worker:effect_first").point(1),
    }


def drawn(name: str, run: object) -> object:
    """The figure the lesson shows for this run, as the lesson's view draws it."""
    lesson = name[:2]
    if lesson in ("01", "02"):
        return TimelineFigure(read_trace(run.run_dir)).fig
    if lesson == "07":
        return TimelineFigure(run.events).fig
    if lesson == "09":
        return TimelineFigure(with_last_commits(read_trace(run.run_dir))).fig
    if lesson == "06":
        return claim_figure(run)
    return outbox_timeline(run) if "outbox" in name else call_figure(run)


@contextmanager
def drawn_texts(figure: object):
    """Each text the renderer really draws (tick labels of ticks in view, not stale ones), with
    its box in pixels at the figure's dpi."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    seen = []
    draw = Text.draw

    def noted(self, renderer):
        if self.get_visible() and self.get_text().strip():
            seen.append(self)
        return draw(self, renderer)

    Text.draw = noted
    try:
        renderer = FigureCanvasAgg(figure).get_renderer()
        figure.draw(renderer)
    finally:
        Text.draw = draw
    yield [(t, t.get_window_extent(renderer)) for t in seen]


def overlapping(a: object, b: object) -> bool:
    """Two boxes share more than a hairline (half a pixel each way)."""
    return min(a.x1, b.x1) - max(a.x0, b.x0) > 0.5 and min(a.y1, b.y1) - max(a.y0, b.y0) > 0.5


def layout_faults(figure: object) -> list[str]:
    """Everything wrong with where the figure's words are, one line each."""
    figure.set_dpi(DPI)  # as figure_png draws it for the notebook
    faults = [] if figure.bbox.width <= NOTEBOOK_PX else [f"{figure.bbox.width} px wide"]
    with drawn_texts(figure) as texts:
        assert texts
        frame = figure.bbox
        for i, (text, box) in enumerate(texts):
            said = repr(text.get_text())
            if text.get_fontsize() < 9:
                faults.append(f"{said} is {text.get_fontsize()} pt")
            if box.x0 < frame.x0 or box.x1 > frame.x1 or box.y0 < frame.y0 or box.y1 > frame.y1:
                faults.append(f"{said} leaves the figure")
            axes = text.axes
            if axes is not None and text in axes.texts and not axes.bbox.contains(box.x0, box.y0):
                faults.append(f"{said} leaves its axes")
            if axes is not None and text in axes.texts and not axes.bbox.contains(box.x1, box.y1):
                faults.append(f"{said} leaves its axes")
            for other, other_box in texts[i + 1 :]:
                if overlapping(box, other_box):
                    faults.append(f"{said} overlaps {other.get_text()!r}")
    return faults


@pytest.mark.parametrize("language", ["en", "zh"])
def test_no_timeline_of_any_lesson_has_words_over_words_or_outside(runs, language):
    set_language(language)
    try:
        faults = {name: layout_faults(drawn(name, run)) for name, run in runs.items()}
    finally:
        set_language("en")
    listed = [f"{name}: {fault}" for name, said in faults.items() for fault in said]
    assert not listed, "\n".join(listed)


def test_one_meaning_has_one_colour_in_every_lesson(runs):
    """A kill is the same vermillion cross, a commit the same black diamond, a transaction on
    the store an effect lands in the same orange, whichever lesson draws it."""
    from matplotlib.colors import to_hex

    marks: dict[str, set] = {}
    for name in ("01 repeated", "05 outbox", "05 caller killed", "07 postgres"):
        for ax in drawn(name, runs[name]).axes:
            for line in ax.lines:
                if line.get_marker() in ("X", "D"):
                    marks.setdefault(line.get_marker(), set()).add(to_hex(line.get_color()))
            for bar in ax.patches:
                marks.setdefault(name, set()).add(to_hex(bar.get_edgecolor()))
    assert marks["X"] == {"#d55e00"} and marks["D"] == {"#000000"}
    for name in ("01 repeated", "05 outbox", "07 postgres"):  # effect.db, consumer.db, business
        assert "#e69f00" in marks[name]
