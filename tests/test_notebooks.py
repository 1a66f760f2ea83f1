"""Every lesson executes top to bottom; committed notebooks are clean and short-celled."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from chinese import assert_lesson_chinese, assert_no_python, shown_by
from nbclient import NotebookClient

FOLDER = Path(__file__).parent.parent / "notebooks"
# What a Chinese lesson may show in English (tests/chinese.py, assert_lesson_chinese), each for
# its reason: a file's data, a library's or a server's own words, a code listed with its meaning.
ZH_ALLOWED = {
    "02_closing_the_window.ipynb": ("done/receipts", "unknown"),  # control.db · pending's state
    "04_durability_under_sigkill.ipynb": ("graph",),  # LangGraph's own docstring, quoted
    # history.jsonl's process and caller.db's status as the files hold them
    "05_the_unknown_outcome.ipynb": ("recovery", "reconcile", "unknown", "failed"),
    "06_two_workers_one_task.ipynb": ("failed",),  # the outcome codes listed with their meaning
    # Postgres's log, psycopg's error, pg_stat's "active: COMMIT"
    "07_real_postgres.ipynb": ("recovery", "COMMIT", "put_writes"),
    "08_retries_and_drains.ipynb": ("sync node",),  # LangGraph's error for a sync node, quoted
}
# What a Chinese lesson may show as Python prints it (assert_no_python), each for its reason:
# LangGraph's own values, quoted (an interrupt's value, a channel's value as the saver decodes it)
ZH_PYTHON = {
    "03_interrupt_and_resume.ipynb": ("{'ticket_id'", "None"),
    "04_durability_under_sigkill.ipynb": ("None",),
}
NOTEBOOKS = sorted(p for p in FOLDER.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
MAX_CELL_LINES = 15


def name(path: Path) -> str:
    """A lesson's test id: its path under notebooks/ (zh/01_... for the Chinese edition)."""
    return path.relative_to(FOLDER).as_posix()


def test_there_are_lessons():
    assert {"00_start_here.ipynb", "01_the_commit_window.ipynb"} <= {p.name for p in NOTEBOOKS}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=name)
def test_committed_without_outputs_with_the_python3_kernel(path):
    notebook = json.loads(path.read_text())
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
            assert len("".join(cell["source"]).splitlines()) <= MAX_CELL_LINES
            assert "%pip" not in "".join(cell["source"])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=name)
def test_links_and_loads_point_to_files_that_exist(path):
    text = path.read_text()
    for target in re.findall(r"\]\(([\w./-]+\.(?:ipynb|md))\)", text):
        assert (path.parent / target).exists(), target
    for target in re.findall(r"%load ([\w./-]+)", text):
        assert (path.parent / target).exists(), target


@pytest.mark.timeout(600)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=name)
def test_executes_top_to_bottom(path, tmp_path):
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    errors = [
        o
        for c in notebook.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "error"
    ]
    assert errors == []
    if path.parent.name == "zh":  # what it shows is Chinese (issue 27)
        assert_lesson_chinese(notebook, ZH_ALLOWED.get(path.name, ()))
        assert_no_python(shown_by(notebook), ZH_PYTHON.get(path.name, ()))
