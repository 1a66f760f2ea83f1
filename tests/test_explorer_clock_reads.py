"""A crash state's recoveries at a day, a month and a year later run only when they could
differ from the recovery at once: when the reader's code read a clock that a restart moves
(`clock_reads`). Otherwise each takes that recovery's report, marked `same_as`, and the
exploration spends a quarter of the processes' work (issue 25, speed). Asserted on real rows:
a monthly key still fails at the month restart, read directly, through a library or through
SQLite's 'now'."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labkit.studies.explorer.replay import explore

MONTH_KEYS = Path(__file__).parent / "outside" / "month_keys.py"


def reports(found: object, restart: str) -> list[dict]:
    """The recovery reports of `restart` in every point's folder."""
    folders = [Path(p.run_dir) for p in found.points if p.n is not None]
    return [
        json.loads((folder.parent / f"after-{restart}" / "recovery.json").read_text())
        if (folder.parent / f"after-{restart}").is_dir()
        else json.loads((folder / f"after-{restart}" / "recovery.json").read_text())
        for folder in folders
    ]


@pytest.mark.parametrize("name", ["direct_graph", "library_graph", "sqlite_graph"])
def test_a_key_of_the_month_still_fails_at_the_month_restart(name):
    found = explore(f"{MONTH_KEYS}:{name}", "graph", restart_at="now,day,month")
    rows = [(p.n, p.outcome, p.restart) for p in found.points]
    month = [(n, "inconsistent", "month") for n in (1, 2, 3, 4)] + [(5, "duplicate", "month")]
    assert rows == [
        (None, "consistent", None),
        *month,
        (6, "consistent", "now"),
        (7, "consistent", "now"),
    ]
    ran = reports(found, "month")  # the node ran again at points 1-5: it read the month
    assert ["same_as" in said for said in ran] == [False] * 5 + [True] * 2


def test_recoveries_that_read_no_clock_take_the_report_of_the_one_at_once():
    found = explore(f"{MONTH_KEYS}:no_clock_graph", "graph")
    assert found.green, found.summary()
    for restart in ("day", "month", "year"):
        said = reports(found, restart)
        assert said and all(report["same_as"] == "now" for report in said)


ARROW_STEP = """import arrow

from labkit.studies.commit_window.stores import PAYLOAD


def report_step(control, effect, gate):
    with effect:
        effect.add_receipt_once(f"job-17:{arrow.utcnow().format('YYYY-MM')}", PAYLOAD)
    with control:
        control.mark_done()
"""
ARROW_GRAPH = """import arrow
from month_keys import graph_of, save_once

graph = graph_of(lambda state: save_once(f"report:{arrow.utcnow().format('YYYY-MM')}"))
INPUT = {"done": False}
"""


@pytest.mark.parametrize("kind", ["step", "graph"])
def test_a_library_imported_before_the_restart_reads_its_moved_clock(tmp_path, kind):
    """arrow takes `datetime` by a name of its own as it loads (`dt_datetime`), and the server
    imports the reader's libraries once (`bench.preload`), before it forks the recoveries: a
    key of the month read through it must still change at the month restart, as it does after
    a real restart, which imports arrow anew; and a graph's read of it is a read of a clock
    (`clock_reads`), or the month's recovery would take the report of the one at once."""
    pytest.importorskip("arrow")
    (tmp_path / "arrow_month.py").write_text(ARROW_STEP if kind == "step" else ARROW_GRAPH)
    name = "report_step" if kind == "step" else "graph"
    found = explore(
        f"{tmp_path}/arrow_month.py:{name}", kind, restart_at="now,month", path=MONTH_KEYS.parent
    )
    failing = [(p.outcome, p.restart) for p in found.failing]
    assert failing and set(failing) <= {("duplicate", "month"), ("inconsistent", "month")}, (
        found.summary()
    )
