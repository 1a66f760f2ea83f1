"""The timing helpers the benchmarks share."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

CALL = " (call)"  # the wall time of an action that times itself, around its call


def interleaved_medians(
    rounds: int,
    actions: dict[str, tuple[Callable[[], object], int]],
    timed_inside: frozenset[str] = frozenset(),
) -> dict[str, list[float]]:
    """Each action's median wall time per round, over `rounds` rounds in which the actions take
    turns (`name: (action, calls per round)`). A shared machine's speed drifts by tens of
    percent within minutes; taking turns makes the drift slow every action alike, so the
    ratio of two actions measured in the same round is steadier than either figure. An action
    named in `timed_inside` returns its own time in seconds (measured where it ran): that is
    its figure, and the wall time of the same calls is kept too, as `name + CALL`, so that it
    can be compared with another action timed around its call."""
    medians: dict[str, list[float]] = {name: [] for name in actions}
    medians.update({name + CALL: [] for name in timed_inside})
    for _ in range(rounds):
        for name, (action, calls) in actions.items():
            timings, walls = [], []
            for _ in range(calls):
                started = time.perf_counter()
                seconds = action()
                walls.append(time.perf_counter() - started)
                timings.append(seconds if name in timed_inside else walls[-1])
            medians[name].append(statistics.median(timings))
            if name in timed_inside:
                medians[name + CALL].append(statistics.median(walls))
    return medians


def ratio_line(over: list[float], under: list[float]) -> tuple[float, float, float]:
    """The ratio of two actions' medians over every round, and its least and greatest within
    a single round (`over[i] / under[i]`)."""
    each = sorted(o / u for o, u in zip(over, under, strict=True))
    return statistics.median(over) / statistics.median(under), each[0], each[-1]


def new_file_line(scratch: Path, files: int = 50) -> str:
    """How long a new file takes to make in `scratch` right now, as a line to print beside the
    figures. On an ext4 file system without a journal (this project's machine) it is 0.014 ms
    at rest but up to 0.7 ms for a minute or more after many files were deleted, a previous
    benchmark's cleanup among them: ext4 will not reuse an inode freed in the last minute, and
    each new file scans past every such one. The files stay in `scratch`, which goes at the end."""
    folder = scratch / "new-files"
    folder.mkdir()
    started = time.perf_counter()
    for n in range(files):
        os.close(os.open(folder / str(n), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    ms = (time.perf_counter() - started) / files * 1000
    return f"a new file here now: {ms:.3f} ms (at rest 0.014 ms; after many deletions up to 0.7)"
