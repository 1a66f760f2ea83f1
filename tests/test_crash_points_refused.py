"""The lab's own files refused to the reader's code, and writes outside the run folder noted,
by the watches of `os.open`, `open` and `note_outside` in this process (issue 33: the mutants
the 2026-12-06 mutation run of studies/explorer/watches.py left alive). Each test puts back what
the watches replace.
"""

from __future__ import annotations

import builtins
import io
import os

import pytest

from labkit.bench.own_names import LABS_OWN, LabsOwnFile
from labkit.bench.trace import TRACE_FILE, read_trace
from tests.test_crash_points import crash_points, points


@pytest.fixture(autouse=True)
def files_put_back(monkeypatch):
    for name in ("open", "close", "write", "pwrite", "writev"):
        monkeypatch.setattr(os, name, getattr(os, name))
    monkeypatch.setattr(builtins, "open", builtins.open)
    monkeypatch.setattr(io, "open", io.open)


def armed(run_dir, **job):
    cp = crash_points(run_dir, **job)
    cp.arm()
    return cp


def test_the_trace_is_refused_to_every_os_open_that_could_change_it_and_to_none_that_reads(
    tmp_path, monkeypatch
):
    armed(tmp_path).watch_descriptor_writes()
    trace = tmp_path / TRACE_FILE
    for flags in (os.O_WRONLY, os.O_RDWR, os.O_RDONLY | os.O_CREAT, os.O_RDONLY | os.O_TRUNC):
        with pytest.raises(LabsOwnFile, match=TRACE_FILE):
            os.open(trace, flags)
    os.close(os.open(trace, os.O_RDONLY))  # reading it: not refused
    (tmp_path / "sub").mkdir()
    folder = os.open(tmp_path / "sub", os.O_RDONLY)
    monkeypatch.chdir(tmp_path)  # where the name alone would be the trace's
    try:  # relative to a folder's descriptor: sub/trace.jsonl, the reader's
        os.close(os.open(TRACE_FILE, os.O_WRONLY | os.O_CREAT, dir_fd=folder))
    finally:
        os.close(folder)
    assert (tmp_path / "sub" / TRACE_FILE).exists()


def test_the_labs_own_work_and_its_marked_files_are_not_refused(tmp_path):
    cp = armed(tmp_path)
    cp.watch_writes()
    with open(tmp_path / f"{LABS_OWN}note", "w") as marked:  # a .labkit- file: no point either
        marked.write("x")
    cp.quiet = True  # the lab's own work (a fork's files, copied)
    with open(tmp_path / TRACE_FILE, "a"):
        pass
    assert points(tmp_path) == []


def test_a_write_outside_is_noted_unless_the_reader_named_it_no_effect(tmp_path):
    run_dir, outside = tmp_path / "run", tmp_path / "elsewhere"
    run_dir.mkdir()
    outside.mkdir()
    cp = armed(run_dir, ignore_files=[str(outside / "*.log")])
    cp.watch_writes()
    for name in ("app.log", "sent.txt"):
        with open(outside / name, "w") as out:
            out.write("x")
    noted = [e["file"] for e in read_trace(run_dir) if e["event"] == "outside"]
    assert noted == [str((outside / "sent.txt").resolve())]
