"""How labkit starts a Python of its own (a fresh worker, the trial server, a helper): this
interpreter in isolated mode, so that nothing beside the reader's notebook is imported."""

from __future__ import annotations

import site
import sys
from pathlib import Path

# Fresh workers start with `python -S`: no site-packages processing (.pth files and the like),
# only plain path entries: labkit's folder first, then where LangGraph's workers find it.
LABKIT_ROOT = str(Path(__file__).resolve().parents[2])
WORKER_PATH = (LABKIT_ROOT, *site.getsitepackages())
# `-c` rather than `-m`: runpy's own imports would cost more than a SQLite worker's. It runs
# in isolated mode (`isolated_python`) and puts the path entries first, as $PYTHONPATH would.
# An error is printed on Python's own stderr, the worker's file, where the parent reads it:
# the reader's code may have put another stream (a StringIO) in its place.
FRESH_MAIN = (
    "import importlib, json, sys; entry, job, *path = sys.argv[1:]; sys.path[:0] = path; "
    "module, function = entry.split(':')\n"
    "try: getattr(importlib.import_module(module), function)(json.loads(job))\n"
    "except BaseException: sys.stderr = sys.__stderr__; raise"
)


def isolated_python(*args: str) -> list[str]:
    """A command line for this Python in isolated mode (`-I`), as every process labkit starts
    runs: its import path holds neither the current folder nor $PYTHONPATH, and it reads no
    PYTHON* variable, so a `json.py` beside the reader's notebook is never imported. Only `-B`
    (write no bytecode files) is carried over, as the caller has it."""
    return [sys.executable, "-I", *(["-B"] if sys.flags.dont_write_bytecode else []), *args]
