"""Choosing the durability mode by its consequences (lesson 4): the lesson's own kills and
clean runs, per mode, and a day of a workload computed from them."""

from __future__ import annotations

import re

import pytest
from chinese import assert_no_english

import labkit as lk
from labkit.bench.errors import LabError
from labkit.studies.durability.consequences import Workload, measured_modes, per_day
from labkit.studies.durability.experiment import DurabilitySpec, clean_run, durability_matrix
from labkit.views.consequences import ConsequencesPanel


def table_rows(html: str) -> list[list[str]]:
    return [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in html.split("<tr>")[2:]]


def rows_of(panel: ConsequencesPanel) -> dict[str, list[str]]:
    return {cells[0]: cells for cells in table_rows(panel.table.value)}


@pytest.fixture(scope="module")
def measured():
    matrix = durability_matrix(trials=2)
    clean = {
        ms: {m: clean_run(DurabilitySpec("parallel", m, ms)) for m in ("sync", "exit")}
        for ms in (0, 250)
    }
    return {m.mode: m for m in measured_modes(matrix, clean)}, matrix, clean


def test_exit_loses_every_killed_run_and_sync_none(measured):
    modes, matrix, _ = measured
    assert (modes["exit"].kills, modes["exit"].lost, modes["exit"].repeated) == (4, 4, 0)
    assert (modes["sync"].kills, modes["sync"].lost) == (4, 0)
    # sync repeats the interrupted step: c on the linear graph, at least p3 on the parallel one
    reruns = [t.rerun_nodes for t in matrix if t.spec.mode == "sync"]
    assert modes["sync"].repeated == sum(map(len, reruns)) >= 4


def test_a_node_costs_the_clean_runs_seconds_over_its_five_nodes(measured):
    modes, _, clean = measured
    assert modes["sync"].seconds_per_node[250] == clean[250]["sync"]["seconds"] / 5
    assert modes["exit"].seconds_per_node[0] == clean[0]["exit"]["seconds"] / 5
    assert modes["async"].seconds_per_node == {}  # no clean run of async measured here
    # sync waits for five 250 ms puts; exit for its one save at the end
    assert modes["sync"].seconds_per_node[250] > modes["exit"].seconds_per_node[250] + 0.1


def test_a_day_of_the_workload(measured):
    modes, _, _ = measured
    day = per_day(modes["exit"], Workload(steps=10, runs_per_day=10_000, crash_rate=0.001))
    assert (day.crashes, day.runs_lost, day.nodes_repeated, day.effects_orphaned) == (
        10.0,
        10.0,
        0.0,
        50.0,
    )
    sync = per_day(modes["sync"], Workload(steps=10, runs_per_day=1000, crash_rate=0.01))
    assert sync.runs_lost == 0 and sync.nodes_repeated == 10 * modes["sync"].repeated / 4


def test_the_panel_redraws_from_its_fields_and_refuses_a_bad_rate(measured):
    lk.set_language("en")
    modes, _, _ = measured
    panel = ConsequencesPanel(list(modes.values()))
    panel.runs.value, panel.rate.value = 2000, 0.5
    assert "2000 runs a day, a crash hits 0.5 of the runs" in panel.table.value
    rows = rows_of(panel)
    # crashes a day, runs lost a day, node runs repeated a day, effects orphaned a day
    assert rows["exit"][5:9] == ["1000.0", "1000.0", "0.0", "5000.0"]  # 10 steps: half orphaned
    assert rows["sync"][5:7] == ["1000.0", "0.0"]
    with pytest.raises(LabError, match="crash rate"):
        Workload(crash_rate=2)
    with pytest.raises(LabError, match="steps per run"):
        Workload(steps=0)
    panel.rate.value = 1.0  # the field's own bounds keep it in range; the table follows
    assert rows_of(panel)["exit"][6] == "2000.0"


def test_in_chinese_the_panel_holds_no_english(measured):
    modes, _, _ = measured
    lk.set_language("zh")
    try:
        panel = ConsequencesPanel(list(modes.values()))
        shown = panel.table.value + " ".join(f.description for f in (panel.steps, panel.runs))
    finally:
        lk.set_language("en")
    assert_no_english(shown, ["consequences"], ["consequences."])
