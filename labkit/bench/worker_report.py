"""What a worker did: the parent's account of it (`WorkerReport`), and the worker's own, left
in `<role>.json` (`read_report`). Studies and judges read these without starting anything."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class WorkerReport:
    """What one worker process did, as the parent saw it."""

    role: str
    pid: int
    exit_code: int | None
    killed_at: str | None  # the kill point where it died, if it was killed there
    timed_out: bool
    seconds: float
    stdout: str
    stderr: str
    left: list[str] = field(default_factory=list)  # what its code left running, ended by the lab

    def to_json(self) -> dict:
        return asdict(self)


def read_report(run_dir: Path, role: str) -> dict:
    """What a worker left in `<role>.json` (`gate.report`); empty if it died before writing it
    whole (a full disk leaves it cut short): its exit status then says what went wrong."""
    try:
        return json.loads((Path(run_dir) / f"{role}.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
