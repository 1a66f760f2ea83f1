"""Less work per crash state, the same matrix (issue 25's speed): the reader's module compiled
once an exploration (`code_cache`), and a crash state's restarts recovered by one worker the
explorer starts, forking the others (`restart_forks`), each still a process of its own where
its code could tell the restarts apart (it reads a clock one moves: `clock_reads`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labkit.bench.launcher import WorkerReport
from labkit.bench.restart import FRESH
from labkit.studies.explorer.code_cache import FOLDER
from labkit.studies.explorer.replay import explore
from labkit.studies.explorer.replays import child_ended, together
from labkit.studies.explorer.report import PointResult
from labkit.studies.explorer.restart_forks import ALSO, EXIT_FILE

OUTBOX = Path(__file__).parent / "outside" / "file_outbox.py"
MONTH_KEYS = Path(__file__).parent / "outside" / "month_keys.py"
RESTARTS = "now,day,month,year"


def recoveries(folder: str) -> dict[str, tuple[int | None, dict]]:
    """Each recovery's folder (under the exploration's) -> its pid and its report (no pid: it
    took the report of the recovery at once, `same_as`)."""
    found = {}
    for report in Path(folder).glob("**/recovery.json"):
        if "same_as" in (said := json.loads(report.read_text())):
            found[str(report.parent.relative_to(folder))] = (None, said)
            continue
        trace = [json.loads(line) for line in (report.parent / "trace.jsonl").open()]
        pids = {e["pid"] for e in trace if e["role"] == "recovery"}
        assert len(pids) == 1, trace
        found[str(report.parent.relative_to(folder))] = (pids.pop(), json.loads(report.read_text()))
    return found


def test_each_restart_recovers_in_a_process_of_its_own_where_the_clock_is_read():
    """Four restarts of a crash state whose recovery reads the month: four recoveries, each
    its own pid, in its own folder with its own report, the children's exits kept as 0; where
    the recovery reads no clock (the node's writes were saved), the others take its report."""
    found = explore(f"{MONTH_KEYS}:direct_graph", "graph", restart_at=RESTARTS)
    done = recoveries(found.folder)
    ran = [pid for pid, _ in done.values() if pid is not None]
    assert len(ran) == 4 * 5 + 2 and len(set(ran)) == len(ran)  # a process for each
    taken = sorted(folder for folder, (pid, _) in done.items() if pid is None)
    assert taken == [f"point-{n:03d}/after-{r}" for n in (6, 7) for r in ("day", "month", "year")]
    for n in range(1, 8):
        for restart in ("day", "month", "year"):
            assert (
                Path(found.folder) / f"point-{n:03d}" / f"after-{restart}" / EXIT_FILE
            ).read_text() == "0"


def test_restarts_of_a_recovery_that_reads_no_clock_take_its_report_and_the_matrix_is_the_same():
    """The outbox graph reads no clock: each crash state is recovered by one process, its other
    restarts' reports are its own, marked `same_as`; the outbox's window is found."""
    found = explore(f"{OUTBOX}:graph", "graph", restart_at=RESTARTS)
    done = recoveries(found.folder)
    states = [p for p in found.points if p.n is not None and p.same_as is None]
    assert len([pid for pid, _ in done.values() if pid is not None]) == len(states)
    assert sum(said.get("same_as") == "now" for _, said in done.values()) == 3 * len(states)
    outbox = [p for p in found.failing if "outbox.txt" in (p.complaint or "")]
    assert outbox and all(p.outcome == "duplicate" for p in outbox)


def test_the_readers_module_is_compiled_once_an_exploration():
    """The first worker keeps the compiled module in the exploration's folder; every other
    reads it (one entry, no partial file), and the reader's folder gets no __pycache__."""
    found = explore(f"{OUTBOX}:graph", "graph", restart_at="now")
    kept = sorted(p.name for p in (Path(found.folder) / FOLDER).iterdir())
    assert len(kept) == 1 and "." not in kept[0], kept
    assert not (OUTBOX.parent / "__pycache__").exists()
    assert found.crash_states > 1 and found.failing  # the workers that read it ran it


def row(n: int, run_dir: str, restart: str) -> PointResult:
    made = PointResult(n, "write", "outbox.txt", None, "", None, run_dir)
    made.restart = restart
    return made


def test_restarts_a_fork_makes_go_to_one_worker_and_a_new_interpreter_apart(tmp_path):
    made = [(row(3, f"{tmp_path}/{r}", r), {"restart": r}) for r in ("now", "day", FRESH)]
    started = together(made)
    assert [(r.restart, job["restart"]) for r, job, _ in started] == [("now", "now"), (FRESH,) * 2]
    (_, job, others), (_, apart, alone) = started
    assert job[ALSO] == [{"restart": "day", "run_dir": f"{tmp_path}/day"}]
    assert others == [made[1][0]]
    assert ALSO not in apart and alone == []


def test_a_child_is_judged_by_the_exit_it_kept_and_its_own_stderr(tmp_path):
    """A child that exited 1 fails its row with its own error line; one whose exit its worker
    did not keep fails (as the worker did, where a timeout's kill ended it)."""
    worker = WorkerReport("recovery", 10, 0, None, False, 0.5, "", "", ["left"])
    (tmp_path / "recovery.stderr").write_text("Traceback ...\nKeyError: 'n'\n")
    (tmp_path / EXIT_FILE).write_text("1")
    child = child_ended(row(3, str(tmp_path), "day"), worker)
    assert (child.exit_code, child.stderr.splitlines()[-1], child.left) == (1, "KeyError: 'n'", [])
    (tmp_path / EXIT_FILE).unlink()  # its worker kept none: never a success
    assert child_ended(row(3, str(tmp_path), "day"), worker).exit_code is None
    killed = WorkerReport("recovery", 10, -9, None, True, 9.0, "", "", [])
    assert child_ended(row(3, str(tmp_path), "day"), killed).timed_out


def test_a_steps_restarts_are_each_a_worker_of_its_own():
    """A step's light server forks a worker cheaply: each restart is started apart (grouped, a
    step explored slower side by side), its folder copied by the exploration."""
    found = explore(
        "labkit.studies.commit_window.worker:effect_first", "step", restart_at="now,day"
    )
    copies = list(Path(found.folder).glob("point-*/after-day"))
    assert copies and all((copy / "recovery.json").exists() for copy in copies)
    assert not any((copy / EXIT_FILE).exists() for copy in copies)


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_a_sync_graphs_crash_states_are_forked_by_its_recording(durability):
    """Under durability "sync" the recording forks the process killed at each crash point,
    as a step's does: no worker runs the graph again to a point (no `first.stdout` in any
    point's folder), and the matrix is the one a replay gives (lesson 9's linear graph: each
    ledger line written before its node's writes are saved is written again). Under "async"
    (saves beside the next step, each state replayed twice) workers still run to the points."""
    found = explore(
        "labkit.studies.explorer.lab:linear", "graph", durability=durability, restart_at="now"
    )
    folders = [Path(p.run_dir) for p in found.points if p.n is not None and p.same_as is None]
    assert len(folders) == found.crash_states == 19
    ran_again = [(folder / "first.stdout").exists() for folder in folders]
    assert ran_again == [durability == "async"] * 19
    if durability == "sync":
        failing = {(p.n, p.detail): p.outcome for p in found.failing}
        assert failing == {(n, "ledger.jsonl"): "duplicate" for n in (4, 5, 8, 9, 12, 13, 16, 17)}
