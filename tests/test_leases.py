"""Lesson 6, two workers and one task: real worker processes race for one task row under a
schedule the lab forces (the first frozen by SIGSTOP at its point, the lab's clock moved on,
the second run, the first thawed), so every outcome happens on every run. The files say what
happened; every process is reaped, even a frozen one whose parent is killed; bad input is one
line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from labkit.bench.errors import LabError
from labkit.bench.portable import AS_ON_MACOS
from labkit.bench.trace import read_trace
from labkit.studies.leases.experiment import Race, execute_claim, run_claim, sweep_claims
from labkit.studies.leases.spec import METHODS, ClaimSpec
from labkit.studies.leases.stepping import ClaimStepSession
from labkit.views.leases_lines import move_words
from tests.conftest import STDLIB, processes_mentioning, worker_imports

ROOT = Path(__file__).resolve().parent.parent
LEASE = 200
PAUSES = (100, 200, 300)  # shorter than the lease, equal to it (it has expired), longer
# method → outcome for a pause shorter than the lease, and for one as long or longer
EXPECTED = {
    "select_then_update": ("both_ran", "both_ran"),
    "conditional_update": ("one_winner", "one_winner"),
    "lease": ("one_winner", "lost_update"),
    "lease_with_fence": ("one_winner", "refused_late_write"),
    "renew_by_name": ("one_winner", "lost_update"),
}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    folder = tmp_path_factory.mktemp("leases") / "sweep"
    results = sweep_claims(pauses=PAUSES, leases=(LEASE,), out=folder)
    assert processes_mentioning(str(folder)) == []  # every worker reaped, none left frozen
    return {(r.spec.method, r.spec.pause_ms): r for r in results}


def rows(result, table):
    return result.after.table(table).rows


def test_the_expected_table_covers_every_method():
    assert set(EXPECTED) == set(METHODS)


@pytest.mark.parametrize("pause", PAUSES)
@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_under_every_pause_ends_as_it_must(sweep, method, pause):
    r = sweep[method, pause]
    assert r.failure is None, r.failure
    assert r.stopped and r.outcome == EXPECTED[method][pause >= LEASE]
    assert {role: w.exit_code for role, w in r.workers.items()} == {"w1": 0, "w2": 0}
    saved = json.loads((r.run_dir / "results.json").read_text())
    assert saved["outcome"] == r.outcome and saved["stop_at"] == r.stop_at


def test_select_then_update_lets_both_claim_with_the_same_token(sweep):
    r = sweep["select_then_update", 300]
    assert r.stop_at == "checked"  # frozen after its SELECT read 'open', before its UPDATE
    assert [row[1] for row in rows(r, "applied")] == ["w2", "w1"]
    assert r.reports["w1"]["fence"] == r.reports["w2"]["fence"] == 33
    assert rows(r, "task") == [["job-17", "done", "w1", 33, None]]


def test_a_conditional_claim_has_one_winner_and_no_lease(sweep):
    r = sweep["conditional_update", 300]
    assert r.reports["w2"] == {"claimed": False}
    assert rows(r, "task") == [["job-17", "done", "w1", 33, None]]
    assert [row[1:3] for row in rows(r, "applied")] == [["w1", 33]]


def test_a_lease_without_a_fence_lets_the_late_write_overwrite_the_newer_one(sweep):
    r = sweep["lease", 300]
    assert [row[1:3] for row in rows(r, "applied")] == [["w2", 34], ["w1", 33]]
    assert rows(r, "document") == [["report-17", "w1/33/1", "w1", 33]]
    assert rows(r, "task") == [["job-17", "done", "w2", 34, LEASE + LEASE]]
    assert r.reports["w1"]["done"] is False and rows(r, "refused") == []


def test_the_fence_refuses_token_33_after_34_in_the_receiver(sweep):
    for pause in (200, 300):  # at pause == lease the lease has expired: now >= lease_until
        r = sweep["lease_with_fence", pause]
        assert [row[1:3] for row in rows(r, "applied")] == [["w2", 34]]
        assert [row[1:] for row in rows(r, "refused")] == [["w1", 33, 34]]
        assert rows(r, "document")[0][2:] == ["w2", 34]
        assert r.reports["w1"] == {"claimed": True, "fence": 33, "applied": False, "done": False}
    short = sweep["lease_with_fence", 100]
    assert short.reports["w2"] == {"claimed": False} and rows(short, "refused") == []


def test_renewing_by_name_extends_the_replacements_lease_and_the_stale_write_lands(sweep):
    r = sweep["renew_by_name", 300]
    renewals = [e for e in r.trace() if e["event"] == "renew"]
    assert [(e["role"], e["held"], e["lab_ms"]) for e in renewals] == [
        ("w2", True, LEASE),
        ("w1", True, 300),
    ]
    # w2 took the task at 200 with a lease to 400; w1's heartbeat, under the same name, moved it
    assert rows(r, "task") == [["job-17", "done", "worker-a", 34, 300 + LEASE]]
    assert rows(r, "document")[0][3] == 33


def test_the_schedule_is_in_the_trace_on_the_labs_clock(sweep):
    r = sweep["lease_with_fence", 300]
    events = [(e["role"], e["event"], e.get("lab_ms")) for e in r.trace()]
    wanted = [
        ("w1", "claim", 0),
        ("lab", "stop", 0),
        ("lab", "clock", LEASE),
        ("w2", "claim", LEASE),
        ("w2", "write", LEASE),
        ("w2", "done", LEASE),
        ("lab", "clock", 300),
        ("lab", "cont", 300),
        ("w1", "write", 300),
        ("w1", "done", 300),
    ]
    assert [
        e for e in events if e[1] in {"claim", "stop", "clock", "write", "done", "cont"}
    ] == wanted
    stop = next(e for e in r.trace() if e["event"] == "stop")
    assert stop["pid"] == r.workers["w1"].pid


def test_a_frozen_worker_is_really_stopped_until_it_is_thawed(tmp_path):
    (tmp_path / "run").mkdir()
    with Race(ClaimSpec("lease_with_fence", 300, LEASE), tmp_path / "run") as race:
        moves = iter(race.steps())
        next(moves)  # w1 stands at 'claimed'
        next(moves)  # it has been frozen
        state = Path(f"/proc/{race.first.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        assert state == "T"  # stopped, by SIGSTOP
        for _ in moves:
            pass
        assert race.result().outcome == "refused_late_write"
    assert processes_mentioning(str(tmp_path)) == []


def test_an_error_in_the_middle_of_the_schedule_kills_the_frozen_worker(tmp_path):
    (tmp_path / "run").mkdir()
    with pytest.raises(KeyboardInterrupt), Race(ClaimSpec("lease"), tmp_path / "run") as race:
        moves = iter(race.steps())
        next(moves)
        next(moves)  # frozen now
        raise KeyboardInterrupt  # a Ctrl-C while w1 is frozen
    assert race.first.proc.returncode == -signal.SIGKILL
    assert processes_mentioning(str(tmp_path)) == []


@pytest.mark.parametrize("platform", [{}, {AS_ON_MACOS: "1"}], ids=["linux", "as-on-macos"])
def test_a_frozen_worker_dies_with_its_parent(tmp_path, platform):
    """A kernel killed while a worker is frozen: the worker cannot notice (it is stopped), so
    Linux kills it when its parent dies; elsewhere (no prctl) the guard process does."""
    code = (
        "import sys, time\n"
        "from labkit.studies.leases.stepping import ClaimStepSession\n"
        "session = ClaimStepSession(out=sys.argv[1])\n"
        "session.proceed()\n"  # w1 frozen now
        "print(session.worker.proc.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path / "run")],
        stdout=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, **platform},
    )
    pid = int(parent.stdout.readline())
    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    assert state == "T"
    parent.kill()  # SIGKILL: no finally, no atexit, nothing of the parent's runs
    parent.wait()
    parent.stdout.close()
    deadline = time.monotonic() + 10
    while processes_mentioning(str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert processes_mentioning(str(tmp_path)) == [], f"frozen worker {pid} outlived its parent"


def test_step_mode_moves_one_step_at_a_time_and_a_kill_lets_the_lease_run_out(tmp_path):
    with ClaimStepSession("lease", 300, LEASE, out=tmp_path / "run") as session:
        assert move_words(session.paused_at).startswith("w1 stands at 'claimed'")
        assert session.state().table("task").rows == [["job-17", "claimed", "w1", 33, LEASE]]
        assert (
            move_words(session.proceed())
            == "w1 frozen; next: the clock moves to 200 ms and w2 arrives to claim"
        )
        assert session.kill() == "claimed"  # w1 dies frozen where it stood
        with pytest.raises(LabError, match="cannot proceed: the first worker"):
            session.proceed()
        result = session.recover()
    assert result.failure is None and result.outcome == "one_winner"
    assert result.workers["w1"].exit_code == -signal.SIGKILL
    assert [row[1:3] for row in rows(result, "applied")] == [["w2", 34]]
    assert processes_mentioning(str(tmp_path)) == []


def test_step_mode_closed_while_frozen_reaps_both(tmp_path):
    session = ClaimStepSession("lease_with_fence", out=tmp_path / "run")
    session.proceed()
    pid = session.worker.proc.pid
    session.close()
    assert session.worker.proc.returncode == -signal.SIGKILL
    assert not os.path.exists(f"/proc/{pid}/stat") or processes_mentioning(str(tmp_path)) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "optimistic"}, "unknown claim method 'optimistic'; choose one of: select_then"),
        ({"pause_ms": -1}, "pause_ms must be a whole number from 0 to 60000, not -1"),
        ({"lease_ms": 0}, "lease_ms must be a whole number from 1 to 60000, not 0"),
        ({"lease_ms": True}, "lease_ms must be a whole number"),
        ({"pause_ms": 2.5}, "pause_ms must be a whole number"),
        ({"timeout": 0}, "timeout must be a number above 0"),
    ],
)
def test_bad_input_is_one_line_naming_the_choices(tmp_path, kwargs, message):
    with pytest.raises(LabError, match=message):
        run_claim(**kwargs, out=tmp_path / "run")
    assert list(tmp_path.iterdir()) == []


def test_a_spec_may_bring_the_second_worker_at_a_moment_of_its_own_within_the_pause():
    """Lesson 6's check brings w2 just before the lease ends, which the usual rule never does
    (halfway through a shorter pause, or when the lease runs out)."""
    assert ClaimSpec("lease", 300, 200, arrives_ms=199).arrival_ms == 199
    assert ClaimSpec("lease", 300, 200).arrival_ms == 200
    with pytest.raises(LabError, match="arrives_ms must be a whole number from 0 to 300, not 301"):
        ClaimSpec("lease", 300, 200, arrives_ms=301)


def test_bad_sweep_input_is_one_line(tmp_path):
    with pytest.raises(LabError, match="pauses must be a list of whole numbers"):
        sweep_claims(pauses=300, out=tmp_path / "s")
    with pytest.raises(LabError, match="give a list of claim method names, from: "):
        sweep_claims(methods="lease", out=tmp_path / "s")
    with pytest.raises(LabError, match="unknown claim method 'x'"):
        sweep_claims(methods=["x"], out=tmp_path / "s")
    assert list(tmp_path.iterdir()) == []


def test_an_existing_out_folder_is_refused_and_left_alone(tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("keep")
    with pytest.raises(LabError, match="already exists"):
        run_claim(out=tmp_path / "taken")
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["mine.txt"]


def test_nothing_is_written_outside_the_run_folder(tmp_path, monkeypatch):
    temp, cwd = tmp_path / "temp", tmp_path / "cwd"
    temp.mkdir()
    cwd.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.chdir(cwd)
    result = run_claim("lease", out=tmp_path / "run")
    assert list(temp.iterdir()) == [] and list(cwd.iterdir()) == []
    names = sorted(p.name for p in result.run_dir.iterdir())
    assert names == sorted(
        ["clock", "receiver.db", "tasks.db", "trace.jsonl", "results.json"]
        + [f"w{n}.{kind}" for n in (1, 2) for kind in ("json", "stdout", "stderr")]
    )


def test_the_worker_imports_only_the_standard_library_and_labkit():
    assert worker_imports("labkit.studies.leases.worker") - {"labkit"} <= STDLIB


def test_a_run_without_out_goes_to_the_runs_home():
    result = execute_claim(ClaimSpec("conditional_update", 50, 100))
    assert result.run_dir.name.startswith("leases-") and result.outcome == "one_winner"
    assert read_trace(result.run_dir)[0]["role"] == "w1"


# --- LangGraph: two processes resume one thread from one SqliteSaver file -------------------


@pytest.fixture(scope="module")
def graph_runs(tmp_path_factory):
    from labkit.studies.leases.resume import GRAPH_CASES, run_graph_race

    folder = tmp_path_factory.mktemp("graph")
    runs = {case: run_graph_race(case, out=folder / case) for case in GRAPH_CASES}
    assert processes_mentioning(str(folder)) == []  # both resumers reaped in every case
    return runs


def interrupted(run):
    """The checkpoint that holds the interrupt: the one both resumers load."""
    return next(c["checkpoint_id"] for c in run["checkpoints"] if c["interrupts"])


def test_two_resumers_both_run_and_the_chain_forks_at_the_interrupt(graph_runs):
    run = graph_runs["race"]
    assert run["failure"] is None and run["outcome"] == "both_ran"
    for role in ("r1", "r2"):
        assert run["resumers"][role]["exit"] == 0
        assert run["resumers"][role]["found_next"] == ["review"]
    assert [line["role"] for line in run["publish_runs"]] == ["r1", "r2"]
    assert run["forks"] == [interrupted(run)]
    children = [c for c in run["checkpoints"] if c["parent"] == interrupted(run)]
    assert [c["next"] for c in children] == [["publish"], ["publish"]]


def test_a_resumer_frozen_holding_the_write_lock_makes_the_other_die_locked(graph_runs):
    run = graph_runs["locked"]
    assert run["failure"] is None
    assert run["resumers"]["r2"]["exit"] == 1
    assert run["resumers"]["r2"]["error"] == {
        "error": "sqlite3.OperationalError: database is locked"
    }
    assert [line["role"] for line in run["publish_runs"]] == ["r1"] and run["forks"] == []


def test_a_claim_around_the_resume_lets_one_process_run(graph_runs):
    run = graph_runs["claimed"]
    assert run["failure"] is None and run["outcome"] == "one_winner"
    assert run["resumers"]["r2"] == {"claimed": False, "ran": False, "exit": 0, "error": None}
    assert run["publish_runs"] == [{"role": "r1", "fence": 33, "applied": True}]
    assert run["forks"] == [] and len(run["checkpoints"]) == 4


def test_the_fence_refuses_a_stalled_resumers_publish_but_its_checkpoints_still_fork(graph_runs):
    run = graph_runs["stalled"]
    assert run["failure"] is None and run["outcome"] == "refused_late_write"
    assert run["publish_runs"] == [
        {"role": "r2", "fence": 34, "applied": True},
        {"role": "r1", "fence": 33, "applied": False},
    ]
    assert run["forks"] == [interrupted(run)]  # LangGraph 1.2.24: no owner for a thread


def test_the_kernel_side_never_imports_langgraph():
    from tests.conftest import run_python

    loaded = run_python(
        """
        import json, sys
        import labkit.studies.leases.resume, labkit.studies.leases.experiment
        print(json.dumps(sorted(m for m in sys.modules if m.startswith("langgraph"))))
        """
    )
    assert loaded == []


def test_graph_bad_input_is_one_line_before_the_trial_server_is_asked(tmp_path, monkeypatch):
    from labkit.bench import server
    from labkit.studies.leases.resume import run_graph_race

    def no_server(*args, **kwargs):
        raise AssertionError("the trial server was asked before the check")

    monkeypatch.setattr(server, "call", no_server)
    (tmp_path / "taken").mkdir()
    with pytest.raises(LabError, match="already exists"):
        run_graph_race("race", out=tmp_path / "taken")
    (tmp_path / "taken").rmdir()

    with pytest.raises(LabError, match="unknown graph case 'both'; choose one of: race, locked"):
        run_graph_race("both", out=tmp_path / "g")
    with pytest.raises(LabError, match="lease_ms must be a whole number"):
        run_graph_race("race", lease_ms=0, out=tmp_path / "g")
    assert list(tmp_path.iterdir()) == []


# --- the command line -----------------------------------------------------------------------


def labkit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "labkit", "claim", *args], capture_output=True, text=True, cwd=ROOT
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--method", "optimistic"], "unknown claim method 'optimistic'; choose one of: select"),
        (["--pause-ms", "-5"], "pause-ms must be a whole number from 0 to 60000, not -5"),
        (["--lease-ms", "soon"], "lease-ms must be a whole number from 1 to 60000, not 'soon'"),
        (["--sweep", "--method", "lease"], "--sweep runs every method at pauses 100, 200, 300"),
        (["--graph", "both"], "unknown graph case 'both'; choose one of: race, locked, claimed"),
        (["--graph", "race", "--pause-ms", "5"], "--graph runs its own schedule; leave out"),
        (["--step", "--sweep"], "not allowed with argument"),
        (["--step", "--json"], "--step shows the files as it goes; it prints no JSON"),
    ],
)
def test_cli_bad_input_is_status_2_and_one_line(args, says):
    done = labkit(*args)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr


def test_cli_one_race_as_json_and_as_text(tmp_path):
    done = labkit("--method", "lease", "--pause-ms", "300", "--json", "--out", str(tmp_path / "j"))
    summary = json.loads(done.stdout)
    assert done.returncode == 0 and summary["outcome"] == "lost_update"
    assert summary["applied"] == 2 and summary["document_fence"] == 33
    text = labkit("--method", "lease_with_fence", "--out", str(tmp_path / "t")).stdout
    assert "outcome: REFUSED LATE WRITE" in text and "token 33, write REFUSED" in text
    assert "receiver.db · refused" in text
    assert processes_mentioning(str(tmp_path)) == []


def test_cli_sweep_classifies_every_method(tmp_path):
    done = labkit("--sweep", "--json", "--out", str(tmp_path / "s"))
    races = json.loads(done.stdout)
    words = {(r["method"], r["pause_ms"]): r["outcome"] for r in races}
    assert len(races) == 15
    assert words == {(m, p): EXPECTED[m][p >= LEASE] for m in METHODS for p in PAUSES}


def test_cli_step_moves_on_enter_and_kills_on_k(tmp_path, capsys):
    import argparse

    from labkit.cli.leases import cmd_claim

    keys = iter(["", "k"])
    args = argparse.Namespace(
        method="lease",
        pause_ms=300,
        lease_ms=LEASE,
        sweep=False,
        graph=None,
        step=True,
        out=str(tmp_path / "step"),
        json=False,
    )
    cmd_claim(args, answer=lambda prompt: next(keys))
    shown = capsys.readouterr().out
    assert shown.count("=== paused at") == 2 and "k: kill -9 w1 here" in shown
    assert "SIGKILL w1 at 'claimed'; the rest of the race runs ..." in shown
    assert "fresh process" not in shown
    assert "outcome: ONE WINNER" in shown and "w1: killed by SIGKILL" in shown
    # every line true: w1 did claim token 33 before it was killed (no "never got the task"),
    # its row says how it ended, and no line is wider than a projector's terminal
    assert "never got" not in shown and "no report" not in shown
    [row] = [line for line in shown.splitlines() if line.startswith("killed by SIGKILL  ")]
    assert "token 34, write applied, done" in row and row.endswith("w2, token 34")
    assert max(len(line) for line in shown.splitlines() if str(tmp_path) not in line) <= 100
    assert processes_mentioning(str(tmp_path)) == []


def test_cli_graph_prints_the_forked_chain(tmp_path):
    text = labkit("--graph", "--out", str(tmp_path / "g")).stdout
    assert "the checkpoint chain FORKS" in text and text.count("FORK: child") == 2
    assert "publish ran 2 times" in text


# --- the views ------------------------------------------------------------------------------


def test_the_views_say_each_outcome_in_words_and_draw_a_lane_per_worker(sweep):
    from labkit.views import leases as views

    results = list(sweep.values())
    text = views.format_claim_sweep(results)
    for word in ("both ran", "one winner", "lost update", "refused late write"):
        assert word in text
    html = views.claim_sweep_html(results)
    assert html.count("REFUSED LATE WRITE") == 3  # two cells, and the legend
    fenced = sweep["lease_with_fence", 300]
    figure = views.timeline_figure(fenced)
    [axes] = figure.axes
    assert [t.get_text() for t in axes.get_yticklabels()] == ["worker 1", "worker 2"]
    labels = [t.get_text() for t in axes.texts]
    assert "lease 33 expires 200" in labels and "lease 34 expires 400" in labels
    legend = [t.get_text() for t in figure.legends[0].get_texts()]
    assert "write 33 ✗" in labels and "w1 frozen (SIGSTOP) 300 ms" in legend
    assert views.figure_png(figure).startswith(b"\x89PNG")
    with pytest.raises(LabError, match="result must be a ClaimResult"):
        views.claim_html({"outcome": "one_winner"})


def test_the_panel_runs_a_race_off_the_kernels_thread_and_shows_its_errors(monkeypatch, tmp_path):
    from labkit.views.leases import LeasePanel

    with pytest.raises(LabError, match="unknown claim method 'x'"):
        LeasePanel("x")
    panel = LeasePanel("lease", 300, 200)
    assert panel.image.layout.display == "none"  # no picture yet: no broken-image icon
    panel.click()
    assert panel.run_button.disabled and panel.result is None  # the click has returned
    panel.job.wait()
    assert panel.error is None and panel.result.outcome == "lost_update"
    assert "LOST UPDATE" in panel.tables.value and bytes(panel.image.value)[:4] == b"\x89PNG"
    assert panel.image.layout.display is None
    assert not panel.run_button.disabled
    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))
    panel.click()
    panel.job.wait()
    assert isinstance(panel.error, LabError) and "missing" in panel.error_line.value
    assert not panel.run_button.disabled


def test_ctrl_c_during_a_sweep_kills_the_frozen_worker_and_reaps_every_one(tmp_path):
    code = (
        "import sys; from labkit.studies.leases.experiment import sweep_claims\n"
        "try:\n    sweep_claims(out=sys.argv[1])\n"
        "except KeyboardInterrupt:\n    sys.exit(130)\n"
    )
    folder = tmp_path / "sweep"
    process = subprocess.Popen([sys.executable, "-c", code, str(folder)], cwd=ROOT)
    deadline = time.monotonic() + 30

    def frozen() -> list[int]:
        """The sweep's workers stopped by SIGSTOP right now (state T in /proc)."""
        stopped = []
        for pid in processes_mentioning("leases.worker", str(folder)):
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:  # it ended meanwhile
                continue
            if stat.rsplit(")", 1)[1].split()[0] == "T":
                stopped.append(pid)
        return stopped

    while not frozen():
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.002)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 130
    assert processes_mentioning(str(folder)) == []


def test_cli_step_quit_while_frozen_kills_and_reaps_and_recovers_nothing(tmp_path, capsys):
    import argparse

    from labkit.cli.leases import cmd_claim

    keys = iter(["", "q"])  # freeze w1, then quit while it is frozen
    args = argparse.Namespace(
        method="lease_with_fence", pause_ms=300, lease_ms=LEASE, sweep=False, graph=None,
        step=True, out=str(tmp_path / "step"), json=False,
    )  # fmt: skip
    cmd_claim(args, answer=lambda prompt: next(keys))
    shown = capsys.readouterr().out
    assert "Quit: w1 was killed and reaped" in shown and "outcome:" not in shown
    assert processes_mentioning(str(tmp_path)) == []
    assert not (tmp_path / "step" / "results.json").exists()


def test_cli_step_ctrl_c_while_frozen_reaps_and_says_the_run_folder(tmp_path, capsys):
    import argparse

    from labkit.cli.leases import cmd_claim

    def pressed(prompt: str) -> str:
        raise KeyboardInterrupt  # Ctrl-C at the prompt, w1 claimed and paused

    args = argparse.Namespace(
        method="lease_with_fence", pause_ms=300, lease_ms=LEASE, sweep=False, graph=None,
        step=True, out=str(tmp_path / "step"), json=False,
    )  # fmt: skip
    with pytest.raises(KeyboardInterrupt):
        cmd_claim(args, answer=pressed)
    shown = capsys.readouterr().out
    assert f"Interrupted: w1 was killed and reaped. Run folder: {tmp_path / 'step'}" in shown
    assert processes_mentioning(str(tmp_path)) == []


def test_every_race_ends_as_it_must_where_prctl_is_missing(tmp_path):
    """macOS's path (forced here): the workers' parent-watching timer must not kill a worker
    that has finished (it did, at Python's shutdown, before portable.die_with stopped it at
    exit), and every frozen worker's guard is stood down and reaped."""
    code = (
        "import json, sys; from labkit.studies.leases.experiment import sweep_claims\n"
        "races = sweep_claims(pauses=(100, 300), out=sys.argv[1])\n"
        "print(json.dumps([[r.spec.method, r.spec.pause_ms, r.outcome, r.failure] for r in races]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "sweep")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, AS_ON_MACOS: "1"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    races = json.loads(done.stdout)
    assert [r[3] for r in races] == [None] * len(races)
    assert {(m, p): o for m, p, o, _ in races} == {
        (m, p): EXPECTED[m][p >= LEASE] for m in METHODS for p in (100, 300)
    }
    assert processes_mentioning(str(tmp_path)) == [] and not processes_mentioning("os.kill(int(")


def test_a_readers_write_is_noted_as_it_landed_though_another_worker_wrote_over_it_after():
    """A reader's receiver writes, is frozen before its next statement (SQLite's changes()),
    and w2 writes over it meanwhile: w1's write landed first, and is noted then. The lab once
    read the document only once the receiver had returned, took w1's write for one never
    made, and said the receiver's True was wrong."""
    source = (
        "def receive(db, writer, fence, body):\n"
        "    db.execute(\"UPDATE document SET body=?, writer=?, fence=? WHERE id='report-17'"
        ' AND fence <= ?", (body, writer, fence, fence))\n'
        '    return db.execute("SELECT changes()").fetchone()[0] == 1\n'
    )
    spec = ClaimSpec("lease", 300, LEASE, same_name=True, receive_source=source)
    result = execute_claim(spec, "receive statement 2")
    assert [row[2:] for row in result.after.table("applied").rows] == [
        [33, "w1/33/1"],
        [34, "w2/34/1"],
    ]
    assert result.reports["w1"]["writes"] == [
        {"applied": True, "returned": "True", "said_written": True}
    ]
    assert result.outcome == "both_ran" and result.after.table("refused").rows == []
