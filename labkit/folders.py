"""Where runs live: every run gets a new folder, by default under one home in the temp directory.

A run writes only inside its own folder, and leaves it there for the reader to look at. So the
folders pile up over a workshop; keeping them under one home per user (`labkit-runs-<uid>`)
lets `labkit clean` remove them all without touching anything else.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from labkit.errors import LabError

__all__ = ["clean_runs", "new_run_dir", "runs_home"]


def runs_home() -> Path:
    """The folder that holds every run made without an explicit `out`."""
    return Path(tempfile.gettempdir()) / f"labkit-runs-{os.getuid()}"


def new_run_dir(out: Path | str | None, prefix: str = "commit-window-") -> Path:
    """A run folder that did not exist before: `out` itself, or a new folder in `runs_home()`."""
    if out is None:
        home = runs_home()
        home.mkdir(mode=0o700, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=prefix, dir=home))
    path = Path(out)
    try:
        path.mkdir(parents=True)
    except FileExistsError:
        raise LabError(f"output folder {path} already exists; name a new one") from None
    return path.resolve()


def clean_runs(dry_run: bool = False) -> tuple[int, int]:
    """Remove every run folder in `runs_home()` (folders given as `out` are the caller's):
    return how many there were and their size in bytes. Not while a run is going."""
    home = runs_home()
    folders = sorted(p for p in home.iterdir() if p.is_dir()) if home.is_dir() else []
    size = sum(f.stat().st_size for d in folders for f in d.rglob("*") if f.is_file())
    if not dry_run:
        for folder in folders:
            shutil.rmtree(folder)
    return len(folders), size
