"""Bad input gets one clear error that names the valid choices, from the API and the CLI."""

from __future__ import annotations

import subprocess
import sys

import pytest

import labkit as lk


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (("nope",), "effect_first, checkpoint_first, atomic, idempotent"),
        (("atomic", "effect"), "start, in_transaction, committed, none"),
        (("atomic", "start", "kill"), "exit, sigkill"),
    ],
)
def test_api_errors_name_the_choices(args, names):
    with pytest.raises(lk.LabError, match=names):
        lk.run(*args)


def test_existing_output_folder_is_refused_and_left_alone(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(lk.LabError, match="already exists"):
        lk.run("atomic", out=tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "labkit", *args], cwd=cwd, capture_output=True, text=True
    )


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (("run", "nope"), "effect_first, checkpoint_first, atomic, idempotent"),
        (("run", "effect_first", "--kill-at", "committed"), "start, effect, checkpoint, none"),
        (("run", "atomic", "--kill-mode", "term"), "exit, sigkill"),
        (("sweep", "--kill-mode", "term"), "exit, sigkill"),
        (("explode",), "orders"),
        ((), "required"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(tmp_path, args, names):
    done = cli(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and names in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert list(tmp_path.iterdir()) == []  # nothing was written


def test_cli_refuses_an_existing_out_folder(tmp_path):
    done = cli("run", "atomic", "--out", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2 and "already exists" in done.stderr
