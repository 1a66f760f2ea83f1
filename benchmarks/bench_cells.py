"""How long each code cell of a lesson takes, run from the top as a reader runs it.

The start page promises what a cell costs; this measures it. Each notebook runs in a fresh
kernel (a copy, in a private temp folder, so nothing is written beside the lessons), and each
code cell's time is the kernel's own: from `execute_input` to `execute_reply`. Prints, per
lesson, how many code cells there are, how many take under 1 s, and the slowest cells with
their first line.

    .venv/bin/python benchmarks/bench_cells.py notebooks/04_durability_under_sigkill.ipynb
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
SLOW = 1.0  # seconds: a cell slower than this is listed


def cell_seconds(cell: dict) -> float:
    """The kernel's own time for one executed cell (nbclient keeps its timestamps)."""
    timing = cell["metadata"]["execution"]
    start = datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
    end = datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
    return (end - start).total_seconds()


def time_notebook(path: Path) -> list[tuple[float, str]]:
    """Run a copy of the notebook from the top; each code cell's seconds and first line."""
    with tempfile.TemporaryDirectory() as home:
        os.chmod(home, 0o755)  # as /tmp's own: lesson 7's Postgres runs as nobody under root
        copy = Path(home) / "notebooks" / path.name
        shutil.copytree(path.parent, copy.parent)
        notebook = nbformat.read(copy, as_version=4)
        os.environ["TMPDIR"] = home  # the runs home too: removed with the folder
        client = NotebookClient(
            notebook,
            timeout=600,
            kernel_name="python3",
            resources={"metadata": {"path": str(copy.parent)}},
        )
        client.execute()
    return [
        (cell_seconds(cell), cell["source"].splitlines()[0] if cell["source"] else "")
        for cell in notebook.cells
        if cell["cell_type"] == "code"
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every lesson")
    parser.add_argument("--top", type=int, default=5, help="slowest cells to list")
    args = parser.parse_args()
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("0*.ipynb"))
    for path in paths:
        times = time_notebook(path.resolve())
        quick = sum(seconds < SLOW for seconds, _ in times)
        total = sum(seconds for seconds, _ in times)
        print(f"{path.name}: {len(times)} code cells, {quick} under {SLOW:g} s, all {total:.1f} s")
        for seconds, first in sorted(times, reverse=True)[: args.top]:
            print(f"  {seconds:6.2f} s  {first[:80]}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
