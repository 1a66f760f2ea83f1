"""Every write order at every kill point: the whole study-000 story in one table.

Trials run a few at a time (two per core: much of a trial waits on fsync). Each one is still a
real first worker, a real kill and a real recovery in fresh processes, in its own folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path

from labkit.bench.errors import check_choices, check_folder, check_function, check_int
from labkit.bench.folders import holds_run_dirs, new_run_dir
from labkit.bench.launcher import kill_all_workers
from labkit.studies.commit_window.orders import ORDERS
from labkit.studies.commit_window.runs import RunResult, execute
from labkit.studies.commit_window.spec import KILL_MODES, RunSpec

__all__ = ["sweep", "sweep_specs"]

Progress = Callable[[int, int, RunResult], None]
MAX_PARALLEL = 32  # trials at a time; each is two short-lived worker processes


def sweep_specs(out: Path, kill_modes: Iterable[str] = ("exit",)) -> list[RunSpec]:
    """One spec per order × kill point × kill mode, each with its own folder under `out`,
    named by its label: `effect_first.effect.exit`."""
    modes = check_choices("kill mode", kill_modes, KILL_MODES)
    specs = [
        RunSpec(order.name, point, mode)
        for order in ORDERS.values()
        for point in order.kill_points
        for mode in modes
    ]
    return [replace(spec, out=out / spec.label) for spec in specs]


@holds_run_dirs
def sweep(
    kill_modes: Iterable[str] = ("exit",),
    out: Path | str | None = None,
    progress: Progress | None = None,
    parallel: int | None = None,
) -> list[RunResult]:
    """Run every spec; call `progress(done, total, result)` after each; return results in order."""
    modes = check_choices("kill mode", kill_modes, KILL_MODES)  # all checked before the folder
    check_function("progress", progress)
    workers = check_int("parallel", parallel, 1, MAX_PARALLEL) if parallel is not None else None
    out = check_folder("out", out)
    longest = max((spec.label for spec in sweep_specs(Path(), modes)), key=len)
    root = new_run_dir(out, prefix="commit-window-sweep-", deepest=longest)  # room checked first
    specs = sweep_specs(root, modes)
    results: dict[RunSpec, RunResult] = {}
    with ThreadPoolExecutor(max_workers=workers or 2 * (os.cpu_count() or 1)) as pool:
        futures = [pool.submit(execute, spec) for spec in specs]
        try:
            for future in as_completed(futures):
                result = future.result()
                results[result.spec] = result
                if progress:
                    progress(len(results), len(specs), result)
        except BaseException:  # Ctrl-C or a failed trial: no worker may outlive the sweep
            pool.shutdown(wait=False, cancel_futures=True)
            kill_all_workers(under=root)  # its own: a paused step panel's worker goes on
            raise
    return [results[spec] for spec in specs]
