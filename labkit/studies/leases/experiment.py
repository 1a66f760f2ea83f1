"""Two workers, one task, and a schedule the lab forces, so each outcome happens on every run.

The first worker starts alone and claims. At its stop point the lab freezes it (SIGSTOP: it
stops wherever it is, as under a long GC pause or a stalled VM), moves the lab's clock to the
second worker's arrival, runs the second worker to its end, moves the clock to the end of the
pause and thaws the first (SIGCONT), which goes on as if nothing happened. Every process is
reaped whatever happens: a frozen worker is thawed or killed (SIGKILL ends a stopped process
too), and a frozen worker whose parent dies is killed all the same (`Freeze`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from labkit.bench.errors import (
    check_choices,
    check_distinct,
    check_folder,
    check_function,
    check_instance,
    check_int,
    refusal,
)
from labkit.bench.failures import failing_run, first_failure
from labkit.bench.folders import holds_run_dirs, keep_json, new_run_dir
from labkit.bench.launcher import WorkerProcess, WorkerReport, isolated_python, read_report
from labkit.bench.portable import LINUX
from labkit.bench.snapshot import Snapshot, take_snapshot
from labkit.bench.trace import Trace, read_trace
from labkit.studies.leases.outcome import FAILED, classify, race_counts
from labkit.studies.leases.spec import MAX_MS, METHODS, STOP_POINTS, ClaimSpec
from labkit.studies.leases.stores import FILES, create_files, set_clock

__all__ = [
    "WORKERS",
    "ClaimResult",
    "Race",
    "check_result",
    "Freeze",
    "Move",
    "execute_claim",
    "run_claim",
    "run_race",
    "sweep_claims",
]

WORKERS = ("w1", "w2")
MOVES = ("freeze", "w2_arrives_frozen", "w2_arrives_not_frozen", "thaw")  # leases.toml's [move]
ENTRY = "labkit.studies.leases.worker:run_worker"


@dataclass(frozen=True)
class Move:
    """The race's next move, as a code of MOVES and the numbers it needs (what step mode is
    paused before); the view says it (`labkit.views.leases_words.move_words`)."""

    code: str
    point: str | None = None  # where w1 stands (freeze)
    ms: int | None = None  # where the lab's clock moves to (w2 arrives, thaw)


# Where Linux's prctl is missing (macOS), a frozen worker's own watcher cannot run: a guard
# process, blocked on a pipe from the parent, kills it when the pipe ends without a word.
GUARD = "import os, sys; os.read(0, 1) or os.kill(int(sys.argv[1]), 9)"


class Freeze:
    """A worker stopped by SIGSTOP until `thaw` (SIGCONT), as a long GC pause or a stalled VM
    stops a process: wherever it is, without its knowing. A stopped process cannot notice that
    its parent has died: on Linux the kernel kills it then (`portable.die_with`, asked by the
    worker at its start); elsewhere a guard process does. `release` stands the guard down."""

    def __init__(self, worker: WorkerProcess, trace: Trace, lab_ms: int) -> None:
        self.worker, self.trace = worker, trace
        pid = worker.proc.pid
        self.guard = None
        if not LINUX:
            self.guard = subprocess.Popen(
                isolated_python("-c", GUARD, str(pid)),
                stdin=subprocess.PIPE,
                start_new_session=True,
            )
        os.kill(pid, signal.SIGSTOP)
        os.waitid(os.P_PID, pid, os.WSTOPPED | os.WEXITED | os.WNOWAIT)  # stopped, or dead
        trace.event("stop", worker=worker.role, pid=pid, lab_ms=lab_ms)

    def release(self) -> None:
        """Stand the guard down (a word on its pipe) and reap it. Safe to call twice."""
        if self.guard is not None:
            with contextlib.suppress(BrokenPipeError):
                self.guard.stdin.write(b"t")
                self.guard.stdin.close()
            self.guard.wait()
            self.guard = None

    def thaw(self, lab_ms: int) -> None:
        """SIGCONT: the worker goes on from where it stood, its view of the world stale."""
        self.release()
        if self.worker.proc.poll() is None:  # not killed while it was frozen (step mode)
            os.kill(self.worker.proc.pid, signal.SIGCONT)
            self.trace.event(
                "cont", worker=self.worker.role, pid=self.worker.proc.pid, lab_ms=lab_ms
            )


@dataclass
class ClaimResult:
    spec: ClaimSpec
    run_dir: Path
    stop_at: str  # the first worker's point where it was frozen
    stopped: bool  # it reached that point (and was frozen there)
    workers: dict[str, WorkerReport]
    reports: dict[str, dict]  # what each worker said of itself: claimed, fence, applied, done
    after: Snapshot
    outcome: str
    failure: dict | None = None

    @property
    def counts(self) -> dict[str, int]:
        return race_counts(self.after)

    def summary(self) -> dict:
        return {
            "method": self.spec.method,
            "pause_ms": self.spec.pause_ms,
            "lease_ms": self.spec.lease_ms,
            "arrival_ms": self.spec.arrival_ms,
            "stop_at": self.stop_at,
            **self.counts,
            "workers": self.reports,
            "exits": {role: w.exit_code for role, w in self.workers.items()},
            "outcome": self.outcome,
            "failure": self.failure,
            "run_dir": str(self.run_dir),
        }

    def to_json(self) -> dict:
        return {
            **self.summary(),
            "spec": {k: str(v) if isinstance(v, Path) else v for k, v in asdict(self.spec).items()},
            "processes": {role: w.to_json() for role, w in self.workers.items()},
            "after": asdict(self.after),
        }

    def trace(self) -> list[dict]:
        """Every event of the run (both workers and the lab), as they were written."""
        return read_trace(self.run_dir)


class Race:
    """One run's workers and its schedule; `steps()` yields before each move, so step mode
    can show the files between them. Close it (or use `with`) to reap every process."""

    def __init__(self, spec: ClaimSpec, run_dir: Path, stop_at: str | None = None) -> None:
        self.spec, self.run_dir = spec, run_dir
        self.stop_at = stop_at or STOP_POINTS[spec.method]
        create_files(str(run_dir))
        self.lab = Trace(run_dir, "lab")
        self.first = self.worker("w1", pause_at=(self.stop_at,))
        self.second = self.worker("w2")
        self.frozen: Freeze | None = None
        self.closed = False

    def worker(self, role: str, pause_at: tuple[str, ...] = ()) -> WorkerProcess:
        spec = self.spec
        job = {
            "parent": os.getpid(),
            "method": spec.method,
            "name": spec.names[role],
            "lease_ms": spec.lease_ms,
            "fenced": spec.fenced,
            "claim_source": spec.claim_source,
            "receive_source": spec.receive_source,
            "writes": spec.writes,
        }
        return WorkerProcess(
            self.run_dir, role, ENTRY, job, pause_at=pause_at, timeout=spec.timeout
        )

    def clock(self, ms: int) -> None:
        set_clock(str(self.run_dir), ms)
        self.lab.event("clock", lab_ms=ms)

    def steps(self) -> Iterator[Move]:
        """The schedule. It starts the first worker, then yields before each later move (its
        code and numbers), so that step mode can show the files between two moves."""
        self.first.start()
        if self.first.wait_for_pause() == self.stop_at:
            yield Move("freeze", point=self.stop_at)
            if self.first.proc.poll() is None:  # not killed meanwhile (step mode)
                self.frozen = Freeze(self.first, self.lab, 0)
                self.first.resume()  # read once it is thawed
        arrival = self.spec.arrival_ms
        now = "frozen" if self.frozen else "not_frozen"
        yield Move(f"w2_arrives_{now}", ms=arrival)
        self.clock(arrival)
        with self.second:
            self.second.wait()
        if self.frozen:
            pause = self.spec.pause_ms
            yield Move("thaw", ms=pause)
            self.clock(pause)
            self.frozen.thaw(pause)
        if self.first.proc.returncode is None:  # else it was killed (step mode) and reaped
            self.first.wait()

    def result(self, first_killed: bool = False) -> ClaimResult:
        """Read the files back, classify, and keep results.json in the run folder.
        `first_killed`: the reader killed the first worker (step mode), as planned."""
        self.close()
        workers = {"w1": self.first.report(), "w2": self.second.report()}
        after = take_snapshot(self.run_dir, FILES)
        planned = [(workers["w2"], None)] + ([] if first_killed else [(workers["w1"], None)])
        failure = first_failure(planned)
        reports = {role: read_report(self.run_dir, role) for role in WORKERS}
        outcome = FAILED if failure else classify(after)
        result = ClaimResult(
            self.spec,
            self.run_dir,
            self.stop_at,
            self.frozen is not None,
            workers,
            reports,
            after,
            outcome,
            failure,
        )
        keep_json(self.run_dir, results=result.to_json())
        return result

    def close(self) -> None:
        """Kill whichever worker still runs (frozen or not) and reap it. Safe twice."""
        if self.frozen:
            self.frozen.release()  # before the kill: the guard must not outlive the pid's owner
        self.first.close()
        self.second.close()
        if not self.closed:
            self.lab.close()
            self.closed = True

    def __enter__(self) -> Race:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_race(spec: ClaimSpec, run_dir: Path, stop_at: str | None = None) -> ClaimResult:
    """The whole schedule in `run_dir` (a new folder); `stop_at`: freeze the first worker at
    this point instead of its method's usual one (the exercises' points between statements)."""
    with failing_run(run_dir), Race(spec, run_dir, stop_at) as race:
        for _move in race.steps():
            pass
        return race.result()


@holds_run_dirs
def run_claim(
    method: str = "lease_with_fence",
    pause_ms: int = 300,
    lease_ms: int = 200,
    out: Path | str | None = None,
    timeout: float = 10.0,
) -> ClaimResult:
    """Two workers race for one task; the first is frozen for `pause_ms` after its claim:
    run_claim("lease", 300, 200) → lost_update; run_claim("lease_with_fence", 300, 200) →
    refused_late_write."""
    spec = ClaimSpec(method, pause_ms, lease_ms, check_folder("out", out), timeout)
    return execute_claim(spec)


@holds_run_dirs
def execute_claim(spec: ClaimSpec, stop_at: str | None = None) -> ClaimResult:
    """One race from a spec (its own new folder, or `spec.out`)."""
    check_instance("spec", spec, ClaimSpec, "claim_spec")
    run_dir = new_run_dir(spec.out, prefix="leases-")
    return run_race(replace(spec, out=run_dir), run_dir, stop_at)


Progress = Callable[[int, int, ClaimResult], None]
SWEEP_PAUSES = (100, 200, 300)
SWEEP_LEASES = (200,)


@holds_run_dirs
def sweep_claims(
    methods: Iterable[str] = tuple(METHODS),
    pauses: Iterable[int] = SWEEP_PAUSES,
    leases: Iterable[int] = SWEEP_LEASES,
    out: Path | str | None = None,
    progress: Progress | None = None,
) -> list[ClaimResult]:
    """Every method × pause × lease, each race in its own folder named by its label
    (`lease.p300.l200`); with the defaults a pause shorter than, equal to and longer than
    the lease."""
    specs = [
        ClaimSpec(method, pause, lease)
        for method in check_choices("claim method", methods, METHODS)
        for pause in whole_numbers("pause", pauses, 0)
        for lease in whole_numbers("lease", leases, 1)
    ]
    check_function("progress", progress)
    longest = max((spec.label for spec in specs), key=len)
    root = new_run_dir(check_folder("out", out), prefix="leases-sweep-", deepest=longest)
    results = []
    with failing_run(root):
        for spec in specs:
            trial = root / spec.label
            trial.mkdir()
            results.append(run_race(replace(spec, out=trial), trial))
            if progress:
                progress(len(results), len(specs), results[-1])
    return results


def whole_numbers(what: str, values: Iterable[int], low: int) -> list[int]:
    """A non-empty list of lab milliseconds (a lone number is refused: give a list)."""
    if isinstance(values, str | int) or not isinstance(values, Iterable):
        raise refusal("ms_list", what=what, value=repr(values))
    picked = [check_int(f"{what} (ms)", value, low, MAX_MS) for value in values]
    if not picked:
        raise refusal("ms_none", what=what)
    return list(check_distinct(what, picked))


def check_result(result: object) -> ClaimResult:
    return check_instance("result", result, ClaimResult, "claim_result")
