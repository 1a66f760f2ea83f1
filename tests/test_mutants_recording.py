"""Which files of a run folder are the lab's own, not the run's, and which the reader left out
(issue 33: the mutants the 2026-12-05 and 2026-12-06 mutation runs of explorer/states.py left in
`lab_file` and `ignored_file`). A file the lab wrote is left out of a crash state; a file the
reader's step wrote must stay in it, unless the reader said to ignore it."""

from __future__ import annotations

from labkit.studies.explorer.states import ignored_file, lab_file


def test_a_workers_report_is_the_json_named_after_its_stderr_whatever_the_role(tmp_path):
    for role in ("first", "w.json"):
        (tmp_path / f"{role}.stderr").write_text("")
        assert lab_file(f"{role}.json", str(tmp_path)), role
    assert not lab_file("orders.json", str(tmp_path))  # no orders.stderr: the run's own file


def test_a_file_that_only_starts_like_a_report_is_the_runs_own(tmp_path):
    (tmp_path / "first.stderr").write_text("")
    assert not lab_file("first.jsonl", str(tmp_path))  # a reader's log beside a worker's
    assert not lab_file("first.json.bak", str(tmp_path))


def test_without_a_folder_the_current_one_is_looked_in(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert not lab_file("service.json")
    (tmp_path / "service.stderr").write_text("")
    assert lab_file("service.json")


def test_an_explorers_workers_report_and_output_are_the_labs_before_it_has_run(tmp_path):
    """A reader's recovery.json is refused in the recording: no recovery.stderr is there yet."""
    for name in ("record.json", "first.stdout", "recovery.json", "recovery.stderr"):
        assert lab_file(name, str(tmp_path)), name
    assert not lab_file("recovery.jsonl", str(tmp_path))


def test_a_file_named_like_a_workers_output_but_with_no_dot_is_the_runs_own(tmp_path):
    (tmp_path / ".stderr").write_text("")  # what "stdout" would be paired with, cut at no dot
    for name in ("stdout", "json"):
        assert not lab_file(name, str(tmp_path)), name


def test_a_file_is_ignored_when_one_of_the_patterns_matches_its_path_in_the_run_folder():
    assert ignored_file("logs/app.log", ["*.txt", "*.log"])  # fnmatch's * crosses folders
    assert not ignored_file("logs/app.log", ["*.txt"])
    assert not ignored_file("logs/app.log", [])
    assert not ignored_file("logs/APP.log", ["*app.log"])  # case counts, on every system
