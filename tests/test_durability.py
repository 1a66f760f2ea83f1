"""Study 004 with real LangGraph graphs and real SIGKILLs, through the trial server."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import labkit as lk
from labkit.bench.ledger import read_ledger
from labkit.studies.durability.experiment import (
    GRAPHS,
    DurabilitySpec,
    describe_checkpoints,
    run_trials,
)
from labkit.studies.durability.pitfalls import PITFALLS, run_pitfall, run_pitfalls
from tests.conftest import children_of, forks_of


def trial(*args, **kwargs):
    return run_trials([DurabilitySpec(*args, **kwargs)], trials=1)[0]


def assert_reaped(t):
    for pid in t.pids:  # killed or exited, and reaped: not even a zombie is left in /proc
        assert not Path(f"/proc/{pid}").exists()


def test_linear_sync_keeps_4_checkpoints_and_reruns_c_only():
    t = trial("linear", "sync")
    assert (t.first_exit, t.killed_inside) == (-9, True)
    assert t.checkpoints == 4 and t.resumed
    assert (t.ledger_lines, t.baseline_lines, t.rerun_nodes) == (9, 8, ["c"])
    assert_reaped(t)


@pytest.mark.parametrize("graph", GRAPHS)
def test_exit_mode_leaves_nothing_to_resume(graph):
    t = trial(graph, "exit")
    assert (t.first_exit, t.killed_inside) == (-9, True)
    assert (t.checkpoints, t.writes) == (0, 0)
    assert not t.resumed and t.recovery_error.startswith("EmptyInputError")
    assert t.ledger_lines < t.baseline_lines  # recovery ran nothing: the work is lost
    assert_reaped(t)


def test_parallel_sync_keeps_3_checkpoints():
    t = trial("parallel", "sync")
    assert t.killed_inside and t.checkpoints == 3 and t.resumed
    assert "p3" in t.rerun_nodes and "start" not in t.rerun_nodes


def test_slow_checkpointer_async_keeps_fewer_than_sync():
    sync, async_ = run_trials(
        [
            DurabilitySpec("parallel", "sync", slow_ms=250),
            DurabilitySpec("parallel", "async", slow_ms=250),
        ],
        trials=1,
    )
    assert sync.checkpoints == 3 and async_.checkpoints < sync.checkpoints
    assert all(t.killed_inside and t.first_exit == -9 for t in (sync, async_))


def test_fresh_interpreters_give_the_same_result_as_forks():
    t = trial("linear", "sync", start_mode="fresh")
    assert (t.first_exit, t.checkpoints, t.ledger_lines, t.rerun_nodes) == (-9, 4, 9, ["c"])


def test_the_decoded_checkpoint_file_matches_the_counts():
    t = trial("linear", "sync")
    described = describe_checkpoints(t)
    assert len(described["checkpoints"]) == t.checkpoints == 4
    assert described["checkpoints"][0]["next"] == ["c"]  # the newest checkpoint waits for c
    assert len(described["writes"]) == t.writes


@pytest.mark.parametrize("mode", ["syncc", "SYNC", ""])
def test_labkit_refuses_a_mistyped_durability(mode):
    with pytest.raises(lk.LabError, match="sync, async, exit"):
        DurabilitySpec("linear", mode)
    done = subprocess.run(
        [sys.executable, "-m", "labkit", "durability", "--mode", mode],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "sync, async, exit" in done.stderr


EXPECTED = {
    "recover_after_exit_kill": ("EmptyInputError", "Received no input for __start__"),
    "unknown_thread": ("EmptyInputError", "Received no input for __start__"),
    "durability_without_checkpointer": ("AttributeError", "_put_checkpoint_fut"),
    "checkpoint_during_and_durability": ("ValueError", "Cannot use both"),
    "database_is_locked": ("OperationalError", "database is locked"),
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_pitfalls_raise_todays_errors(name):
    report = run_pitfall(name)
    kind, text = EXPECTED[name]
    assert report["raised"]["type"] == kind and text in report["raised"]["message"]
    if name == "durability_without_checkpointer":
        assert any("no effect when no checkpointer" in w for w in report["warnings"])


def test_a_mistyped_durability_passes_silently_and_waits_like_async():
    report = run_pitfall("mistyped_durability")
    assert report["raised"] is None and report["warnings"] == []
    waited = {row["mode"]: row["b_waited_ms"] for row in report["outcome"]}
    # sync waits for the 100 ms put() before b starts; the others do not wait for it, so their
    # gap is the machine's own: under load it has reached 71 ms, never the put's 100
    assert waited["sync"] >= 90
    assert waited["syncc"] < 90 and waited["async"] < 90


def test_every_pitfall_in_one_call_gives_the_same_reports_in_order():
    heard = []
    reports = run_pitfalls(progress=lambda done, total, _: heard.append((done, total)))
    assert list(reports) == list(PITFALLS)
    assert heard == [(n, len(PITFALLS)) for n in range(1, len(PITFALLS) + 1)]
    for name, (kind, text) in EXPECTED.items():
        raised = reports[name]["raised"]
        assert raised["type"] == kind and text in raised["message"], name
    waited = {row["mode"]: row["b_waited_ms"] for row in reports["mistyped_durability"]["outcome"]}
    assert waited["sync"] >= 90 and waited["syncc"] < 90 and waited["async"] < 90


def test_every_pitfall_is_tested():
    assert set(EXPECTED) | {"mistyped_durability"} == set(PITFALLS)


def test_trials_must_be_positive_and_the_cli_says_so_in_one_line():
    with pytest.raises(lk.LabError, match="trials must be a whole number from 1 to 500, not 0"):
        run_trials([DurabilitySpec()], trials=0)
    done = subprocess.run(
        [sys.executable, "-m", "labkit", "durability", "--trials", "0"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "from 1 to 500" in done.stderr


@pytest.mark.parametrize("after_s", [0, 1.5])  # as the call starts, and in the middle of it
def test_ctrl_c_during_trials_stops_the_server_call_and_leaves_no_worker(after_s):
    cli = subprocess.Popen(
        [sys.executable, "-m", "labkit", "durability", "--trials", "200", "--slow-ms", "50"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    servers: list[int] = []
    workers: list[int] = []
    while not workers and time.monotonic() < deadline:  # the server runs and has forked a worker
        servers = children_of(cli.pid)
        workers = forks_of(servers[0]) if servers else []
        time.sleep(0.01)
    time.sleep(after_s)
    workers += forks_of(servers[0])  # the spares waiting, and the worker of the trial
    cli.send_signal(signal.SIGINT)
    _, stderr = cli.communicate(timeout=60)
    assert cli.returncode == 130, stderr
    assert "killed and reaped" in stderr
    time.sleep(0.5)
    assert servers and workers
    for pid in servers + workers:  # the server was stopped, its workers killed and reaped
        assert not Path(f"/proc/{pid}").exists()


def test_a_matrix_runs_two_trials_side_by_side_and_keeps_the_specs_order(tmp_path):
    specs = [DurabilitySpec("linear", "sync"), DurabilitySpec("parallel", "async")]
    seen = []
    trials = run_trials(specs, trials=2, out=tmp_path / "m", progress=lambda *a: seen.append(a))
    assert [t.spec for t in trials] == [specs[0], specs[0], specs[1], specs[1]]
    folders = [s.trial_folder(n) for s in specs for n in (1, 2)]
    assert [Path(t.run_dir).name for t in trials] == folders
    assert all(t.killed_inside and t.resumed and t.failure is None for t in trials)
    assert sorted(done for done, _, _ in seen) == [1, 2, 3, 4] and {a[1] for a in seen} == {4}
    # The ledgers' own clocks: the second trial's first worker wrote its first line before the
    # first trial's recovery wrote its last.
    first, second = (read_ledger(t.run_dir) for t in trials[:2])
    assert second[0]["t_ns"] < first[-1]["t_ns"]
    for t in trials:
        assert_reaped(t)


def span(t) -> tuple[int, int]:
    """A trial's time: from its first worker's start (its output file made) to its results."""
    return tuple(Path(t.run_dir, f).stat().st_mtime_ns for f in ("first.stdout", "results.json"))


def overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def test_trials_whose_outcome_is_a_race_run_one_at_a_time(tmp_path):
    specs = [DurabilitySpec("linear", "async", slow_ms=20), DurabilitySpec("linear", "sync")]
    trials = run_trials(specs, trials=1, out=tmp_path / "m")  # async runs ahead of a slow put
    assert not overlap(*map(span, trials))


def test_the_stand_ins_put_times_come_from_as_many_runs_as_asked():
    from labkit.studies.durability.experiment import put_latencies

    setups = {"sqlite": ("sqlite", 0), "stub": ("sqlite", 100)}
    heard = []
    times = put_latencies(2, setups, stub_runs=1, progress=lambda *step: heard.append(step))
    assert heard == [(1, 3, None), (2, 3, None), (3, 3, None)]  # a step as each clean run ends
    assert len(times["sqlite"]) == 2 * len(times["stub"]) > 0  # a clean run's puts, twice
    # each stand-in's put waits its 100 ms; SQLite's (about 1 ms) not all as long, however
    # loaded the machine (one took 186 ms under two busy loops: no bound on the slowest)
    assert min(times["stub"]) >= 100 > min(times["sqlite"])
    assert len(put_latencies(1, {"stub": ("sqlite", 100)})["stub"]) == len(times["stub"])


def test_a_call_that_may_start_the_server_reports_its_steps_as_they_end():
    from labkit.bench import server
    from labkit.studies.durability.library import durability_in_library

    server.stop()  # the first step is the server's start, as in a lesson's first call
    heard = []
    facts = durability_in_library(progress=lambda done, total, _: heard.append((done, total)))
    assert heard == [(0, 2), (1, 2), (2, 2)]
    assert facts["default"] in facts["literal"]


def test_sync_trials_on_a_slow_checkpointer_run_two_at_a_time_async_ones_alone():
    # No node runs before a sync checkpoint is saved: another trial's load cannot tilt it. In
    # async the nodes run ahead of the slow put: a race, so those trials run alone.
    specs = [DurabilitySpec("parallel", mode, slow_ms=100) for mode in ("async", "sync")]
    found = run_trials(specs, trials=2)
    spans = [(t.spec.mode, span(t)) for t in found]
    [sync_1, sync_2] = [s for mode, s in spans if mode == "sync"]
    assert overlap(sync_1, sync_2)
    for alone in (s for mode, s in spans if mode == "async"):
        assert not any(overlap(alone, other) for _, other in spans if other is not alone)
    assert [t.spec.mode for t in found] == ["async", "async", "sync", "sync"]  # specs' order
    assert all(t.killed_inside and t.failure is None for t in found)
