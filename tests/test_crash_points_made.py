"""The crash points of files and folders a run makes, empties or removes, seen by
`watch_made_and_removed` in this process (issue 33: the 2026-12-06 mutation run of
studies/explorer/watches.py left its mutants to the lesson judges' tests, which the recording's
guards do not run). An empty marker is a state a kill leaves: each test reads which points came.
The watch replaces `open` and five functions of `os`: each test puts them back.
"""

from __future__ import annotations

import builtins
import io
import os

import pytest

from labkit.studies.explorer.watches import LabsOwnFile
from tests.test_crash_points import crash_points, points

WATCHED = [(builtins, "open"), (io, "open")] + [
    (os, name) for name in ("open", "mkdir", "rmdir", "remove", "unlink")
]


@pytest.fixture(autouse=True)
def files_put_back(monkeypatch):
    for module, name in WATCHED:
        monkeypatch.setattr(module, name, getattr(module, name))


def watched(run_dir):
    cp = crash_points(run_dir)
    cp.watch_made_and_removed()
    cp.arm()
    return cp


def writes(run_dir) -> list[tuple[str, int]]:
    """The write points, each with how many times its file had come."""
    return [(detail, nth) for _, op, detail, nth in points(run_dir) if op == "write"]


def test_a_file_opened_for_writing_is_a_point_when_made_or_emptied_not_when_left_as_it_was(
    tmp_path,
):
    (tmp_path / "full.log").write_text("a line\n")
    (tmp_path / "empty.log").write_text("")
    (tmp_path / "one.byte").write_text("x")
    (tmp_path / "kept.log").write_text("a line\n")
    watched(tmp_path)
    open(tmp_path / "sent.flag", "w").close()  # made, empty: a point
    open(tmp_path / "full.log", "w").close()  # emptied: a point
    open(tmp_path / "empty.log", "w").close()  # empty before, empty after: none
    open(tmp_path / "sent.flag", "a").close()  # there already: none
    open(tmp_path / "full.log").close()  # read: none
    open(tmp_path / "new.log", "a").close()  # made by an append: a point
    io.open(tmp_path / "made.x", "x").close()  # noqa: UP020 - io.open, watched as well
    open(tmp_path / "full.log", "r+").close()  # open to change, not emptied: none
    open(tmp_path / "one.byte", "w").close()  # a byte emptied: a point
    descriptor = os.open(tmp_path / "kept.log", os.O_WRONLY)  # neither made nor emptied
    open(descriptor, "w").close()  # by its descriptor, "w" empties nothing: none
    assert writes(tmp_path) == [
        ("sent.flag", 1),
        ("full.log", 1),
        ("new.log", 1),
        ("made.x", 1),
        ("one.byte", 1),
    ]


def test_the_watched_open_passes_every_argument_on(tmp_path):
    watched(tmp_path)
    with open(tmp_path / "latin.txt", "w", -1, "latin-1") as by_position:
        by_position.write("é")
    with open(tmp_path / "latin-too.txt", "w", encoding="latin-1") as by_name:
        by_name.write("é")
    os.close(os.open(tmp_path / "private", os.O_WRONLY | os.O_CREAT, 0o600))
    assert (tmp_path / "latin.txt").read_bytes() == (tmp_path / "latin-too.txt").read_bytes()
    assert (tmp_path / "latin.txt").read_bytes() == b"\xe9"
    assert (tmp_path / "private").stat().st_mode & 0o777 == 0o600


def test_a_file_made_or_truncated_by_os_open_is_a_point(tmp_path):
    (tmp_path / "full.log").write_text("a line\n")
    (tmp_path / "empty.log").write_text("")
    watched(tmp_path)
    for name, flags in [
        ("made.log", os.O_WRONLY | os.O_CREAT),  # made: a point
        ("made.log", os.O_WRONLY | os.O_CREAT),  # there already: none
        ("full.log", os.O_WRONLY | os.O_CREAT),  # there already, not emptied: none
        ("full.log", os.O_WRONLY | os.O_TRUNC),  # emptied: a point
        ("empty.log", os.O_WRONLY | os.O_TRUNC),  # empty already: none
        ("empty.log", os.O_WRONLY),  # neither made nor emptied: none
    ]:
        os.close(os.open(tmp_path / name, flags))
    (tmp_path / "touched").touch()  # Path.touch: os.open with O_CREAT
    assert writes(tmp_path) == [("made.log", 1), ("full.log", 1), ("touched", 1)]


def test_a_file_made_relative_to_a_folders_descriptor_is_not_told(tmp_path, monkeypatch):
    """`dir_fd` names no path the watch could read: it makes no point rather than a wrong one,
    even where the name read from the current folder would be one of the run folder's."""
    (tmp_path / "sub").mkdir()
    folder = os.open(tmp_path / "sub", os.O_RDONLY)
    monkeypatch.chdir(tmp_path)
    watched(tmp_path)
    try:
        os.close(os.open("by-fd.log", os.O_WRONLY | os.O_CREAT, dir_fd=folder))
        os.mkdir("by-fd", dir_fd=folder)
        made = sorted(os.listdir(tmp_path / "sub"))
        os.rmdir("by-fd", dir_fd=folder)
        os.remove("by-fd.log", dir_fd=folder)
    finally:
        os.close(folder)
    assert made == ["by-fd", "by-fd.log"]  # in the folder the descriptor names
    assert writes(tmp_path) == [] and os.listdir(tmp_path / "sub") == []


def test_a_folder_made_or_removed_and_a_file_removed_are_points_named_by_their_path(tmp_path):
    watched(tmp_path)
    os.mkdir(tmp_path / "logs")
    open(tmp_path / "logs" / "app.log", "w").close()
    os.remove(tmp_path / "logs" / "app.log")
    open(tmp_path / "logs" / "app.log", "w").close()
    os.unlink(tmp_path / "logs" / "app.log")
    os.rmdir(tmp_path / "logs")
    assert writes(tmp_path) == [
        ("logs", 1),
        (os.path.join("logs", "app.log"), 1),
        (os.path.join("logs", "app.log"), 2),
        (os.path.join("logs", "app.log"), 3),
        (os.path.join("logs", "app.log"), 4),
        ("logs", 2),
    ]


def test_files_outside_the_run_folder_or_the_labs_own_make_no_point(tmp_path):
    run_dir, outside = tmp_path / "run", tmp_path / "elsewhere"
    run_dir.mkdir()
    outside.mkdir()
    cp = watched(run_dir)
    open(outside / "made.log", "w").close()
    os.mkdir(outside / "folder")
    os.remove(outside / "made.log")
    open(run_dir / "record.stdout", "w").close()  # an explorer's worker's output: the lab's
    assert writes(run_dir) == []
    cp.quiet = True  # the lab's own work (a recovery's set-up): no point
    open(run_dir / "quiet.log", "w").close()
    assert writes(run_dir) == []


def test_removing_the_labs_trace_is_refused_before_it_is_removed(tmp_path):
    watched(tmp_path)
    trace = next(tmp_path.glob("*.jsonl"))
    with pytest.raises(LabsOwnFile):
        os.remove(trace)
    assert trace.exists()
