"""Study 004: kill a LangGraph run inside a node, recover in a fresh process, count what ran twice.

A trial: a preloaded worker runs the graph with the chosen `durability`; the target node (c, or
p3) tells the parent it is inside, between its ledger `start` and `end` lines; the parent sends
SIGKILL; the parent counts the checkpoint file's `checkpoints` and `writes` rows as the kill
left them; a fresh worker resumes with `invoke(None)`; the ledger shows which nodes ran twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from labkit.bench import server
from labkit.bench.errors import (
    MAX_TIMEOUT,
    check_bool,
    check_choice,
    check_choices,
    check_distinct,
    check_folder,
    check_function,
    check_instance,
    check_int,
    check_number,
    refusal,
)
from labkit.bench.folders import check_run_dir
from labkit.bench.launcher import START_MODES
from labkit.bench.postgres import given_url

__all__ = [
    "CHECKPOINTERS",
    "CHECKPOINTER_SETUPS",
    "DURABILITY_MODES",
    "GRAPHS",
    "KILL_MOMENTS",
    "MAX_SLOW_MS",
    "MAX_TRIALS",
    "DurabilitySpec",
    "Trial",
    "clean_run",
    "clean_run_seconds",
    "durability_matrix",
    "describe_checkpoints",
    "put_latencies",
    "run_trials",
]

DURABILITY_MODES = ("sync", "async", "exit")  # LangGraph itself accepts any string here
GRAPHS = ("linear", "parallel")
# others_done: p3 waits for p1 and p2 (parallel); checkpoint_after_b: as put() starts saving
# the checkpoint that follows b (linear), issue #8039's moment: are b's writes saved yet?
KILL_MOMENTS = ("target_starts", "others_done", "checkpoint_after_b")
BASELINE_LINES = {"linear": 8, "parallel": 10}  # a clean run: start + end for every node
MAX_TRIALS = 500  # per spec: a kill-and-recover trial takes about a second on a laptop
MAX_SLOW_MS = 5000  # a put() this slow keeps a trial well inside its workers' 60 s timeout
CHECKPOINTERS = ("sqlite", "postgres")  # the run's SQLite file, or PostgresSaver (lesson 7)
# Lesson 7's matrix, side by side: a local file, the study's 250 ms stand-in, a real Postgres.
CHECKPOINTER_SETUPS = {
    "sqlite": ("sqlite", 0),
    "stub_250ms": ("sqlite", 250),
    "postgres": ("postgres", 0),
}
MAX_PUT_RUNS = 50  # clean runs per checkpointer when measuring put(): about 5 puts each


@dataclass(frozen=True)
class DurabilitySpec:
    """One configuration of study 004. Invalid values raise LabError naming the choices."""

    graph: str = "linear"
    mode: str = "sync"
    slow_ms: int = 0  # delay every checkpointer put() by this much (study 004: 250)
    kill_moment: str = "target_starts"
    timeout: float = 60.0
    start_mode: str = "fork"  # or "fresh": a new interpreter per worker (slow; benchmarks)
    checkpointer: str = "sqlite"  # or "postgres": PostgresSaver on a schema of the trial's own
    writes_delay_ms: int = 0  # delay every put_writes() by this much (issue #8039's race)

    def __post_init__(self) -> None:
        check_choice("graph", self.graph, GRAPHS)
        check_choice("checkpointer", self.checkpointer, CHECKPOINTERS)
        check_choice("durability mode", self.mode, DURABILITY_MODES)
        check_choice("kill moment", self.kill_moment, KILL_MOMENTS)
        check_choice("start mode", self.start_mode, START_MODES)
        if self.kill_moment == "others_done" and self.graph != "parallel":
            raise refusal("others_done_needs_parallel")
        if self.kill_moment == "checkpoint_after_b" and self.graph != "linear":
            raise refusal("checkpoint_after_b_needs_linear")
        # stored as plain int and float: the spec crosses to the trial server as JSON
        object.__setattr__(self, "slow_ms", check_int("slow_ms", self.slow_ms, 0, MAX_SLOW_MS))
        delay = check_int("writes_delay_ms", self.writes_delay_ms, 0, MAX_SLOW_MS)
        object.__setattr__(self, "writes_delay_ms", delay)
        object.__setattr__(self, "timeout", check_number("timeout", self.timeout, 0, MAX_TIMEOUT))

    @property
    def label(self) -> str:
        """What its trials' folders are named by: two specs of one label would share them."""
        saver = "" if self.checkpointer == "sqlite" else f"{self.checkpointer}."
        writes = f"writes{self.writes_delay_ms}ms." if self.writes_delay_ms else ""
        return f"{self.graph}.{self.mode}.{saver}{self.slow_ms}ms.{writes}{self.kill_moment}"

    def trial_folder(self, n: int) -> str:
        """The name of the folder of the spec's `n`th trial (from 1), inside the matrix's."""
        return f"{self.label}.{n}"

    @property
    def job(self) -> dict:
        return {
            "graph": self.graph,
            "mode": self.mode,
            "slow_ms": self.slow_ms,
            "kill_moment": self.kill_moment,
            "checkpointer": self.checkpointer,
            "writes_delay_ms": self.writes_delay_ms,
        }


@dataclass
class Trial:
    """What one kill-and-recover trial left behind."""

    spec: DurabilitySpec
    run_dir: str
    first_exit: int | None
    killed_inside: bool  # the ledger has the target's `start` and not its `end`
    checkpoints: int  # rows in `checkpoints` at the kill
    writes: int  # rows in `writes` at the kill
    orphan_writes: int  # of those, rows whose checkpoint was never saved
    resumed: bool  # recovery found a checkpoint to resume from
    recovery_error: str | None
    ledger_lines: int  # after recovery
    baseline_lines: int  # a clean run's
    rerun_nodes: list[str]
    pids: list[int]  # first worker, recovery worker: gone (reaped) when the trial returns
    failure: dict | None = None  # a worker did not do what was planned: which, and why
    put_ms: list[float] = field(default_factory=list)  # each put() of both workers, timed

    def summary(self) -> dict:
        fields = asdict(self)
        return {**fields.pop("spec"), **fields}

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Trial:
        return cls(**{**data, "spec": DurabilitySpec(**data["spec"])})


Progress = Callable[[int, int, Trial], None]


def run_trials(
    specs: list[DurabilitySpec],
    trials: int = 4,
    out: Path | str | None = None,
    progress: Progress | None = None,
    postgres_url: str | None = None,
) -> list[Trial]:
    """`trials` kill-and-recover trials of each spec, run by the trial server. A Postgres
    checkpointer runs on labkit's own server unless `postgres_url` (or $LABKIT_POSTGRES_URL)
    names one of the reader's."""
    if (
        not isinstance(specs, list | tuple)
        or not specs
        or not all(isinstance(spec, DurabilitySpec) for spec in specs)
    ):  # all checked before the trial server starts
        raise refusal("specs_form", value=repr(specs))
    check_distinct("spec", specs, lambda spec: spec.label)
    trials = check_int("trials", trials, 1, MAX_TRIALS)
    out = check_folder("out", out)
    check_function("progress", progress)
    url = given_url(postgres_url)
    longest = max((spec.trial_folder(trials) for spec in specs), key=len)
    check_run_dir(out, "durability-trials-", deepest=longest)  # the server would find it late
    relay = (
        (lambda done, total, item: progress(done, total, Trial.from_json(item)))
        if progress
        else None
    )
    results = server.call(
        "labkit.studies.durability.trials:run_trials",
        relay,
        specs=[asdict(s) for s in specs],
        trials=trials,
        out=str(out) if out else None,
        postgres_url=url,
    )  # a LabError or RunFailed in the server comes back as itself
    return [Trial.from_json(r) for r in results]


def durability_matrix(
    graphs: tuple[str, ...] = GRAPHS,
    modes: tuple[str, ...] = DURABILITY_MODES,
    trials: int = 4,
    slow_ms: int = 0,
    kill_moment: str = "target_starts",
    out: Path | str | None = None,
    progress: Progress | None = None,
    checkpointer: str = "sqlite",
    postgres_url: str | None = None,
) -> list[Trial]:
    """Study 004's matrix: every graph × every mode × `trials` kills (24 by default)."""
    setup = {checkpointer: (checkpointer, slow_ms)}
    return checkpointer_matrix(
        graphs, modes, trials, kill_moment, setup, out, progress, postgres_url
    )


def checkpointer_matrix(
    graphs: tuple[str, ...] = GRAPHS,
    modes: tuple[str, ...] = DURABILITY_MODES,
    trials: int = 4,
    kill_moment: str = "target_starts",
    setups: dict[str, tuple[str, int]] | None = None,
    out: Path | str | None = None,
    progress: Progress | None = None,
    postgres_url: str | None = None,
) -> list[Trial]:
    """Lesson 7's matrix: every graph × mode on each checkpointer set-up, side by side in one
    run (by default CHECKPOINTER_SETUPS: local SQLite, the study's 250 ms stub, real Postgres)."""
    graphs = check_choices("graph", graphs, GRAPHS)
    modes = check_choices("durability mode", modes, DURABILITY_MODES)
    check_choice("kill moment", kill_moment, KILL_MOMENTS)  # even if no graph here uses it
    setups = CHECKPOINTER_SETUPS if setups is None else setups
    check_instance("setups", setups, dict, "setups")
    moment = {g: kill_moment if g == "parallel" else "target_starts" for g in graphs}
    specs = [
        DurabilitySpec(g, m, slow_ms, moment[g], checkpointer=saver)
        for saver, slow_ms in setups.values()
        for g in graphs
        for m in modes
    ]
    return run_trials(specs, trials, out, progress, postgres_url)


def clean_run_seconds(spec: DurabilitySpec, out: Path | str | None = None) -> float:
    """Wall time of one clean run (no kill) of the spec's graph, measured inside the worker."""
    return clean_run(spec, out)["seconds"]


def clean_run(
    spec: DurabilitySpec, out: Path | str | None = None, postgres_url: str | None = None
) -> dict:
    """One clean run (no kill) of the spec's graph: {"seconds": wall time measured inside the
    worker, "checkpoints": how many it saved, "put_ms": how long each put() took}."""
    check_instance("spec", spec, DurabilitySpec, "durability_spec")
    check_run_dir(check_folder("out", out), "durability-clean-")
    url = given_url(postgres_url)
    return server.call(
        "labkit.studies.durability.trials:clean_run",
        spec=asdict(spec),
        out=str(out) if out else None,
        postgres_url=url,
    )


def put_latencies(
    runs: int = 10,
    setups: dict[str, tuple[str, int]] | None = None,
    postgres_url: str | None = None,
    stub_runs: int | None = None,
    progress: Callable[[int, int, None], None] | None = None,
) -> dict[str, list[float]]:
    """Every put() of `runs` clean runs (linear graph, sync) on each checkpointer set-up, in
    milliseconds: the real distribution beside the study's 250 ms stand-in. A set-up with a
    delay (the stand-in, whose put() sleeps first) runs `stub_runs` times instead, if given:
    its every put() takes the delay and a little more, and a run of five takes over a second.
    `progress(done, total, None)` as each clean run ends."""
    runs = check_int("runs", runs, 1, MAX_PUT_RUNS)
    stub_runs = runs if stub_runs is None else check_int("stub_runs", stub_runs, 1, MAX_PUT_RUNS)
    setups = CHECKPOINTER_SETUPS if setups is None else setups
    check_instance("setups", setups, dict, "setups")
    check_function("progress", progress)
    specs = {
        name: DurabilitySpec("linear", "sync", ms, checkpointer=saver)
        for name, (saver, ms) in setups.items()
    }
    planned = [
        (name, spec)
        for name, spec in specs.items()
        for _ in range(stub_runs if spec.slow_ms else runs)
    ]
    found: dict[str, list[float]] = {name: [] for name in specs}
    for done, (name, spec) in enumerate(planned, 1):
        found[name] += clean_run(spec, None, postgres_url)["put_ms"]
        if progress:
            progress(done, len(planned), None)
    return found


def describe_checkpoints(trial: Trial, at_kill: bool = True) -> dict:
    """The trial's `checkpoints` and `writes`, decoded through LangGraph's API in a worker:
    as the kill left them (a copy taken before recovery), or as recovery left them."""
    check_instance("trial", trial, Trial, "trial")
    check_bool("at_kill", at_kill)
    if trial.spec.checkpointer != "sqlite":
        raise refusal("checkpoints_in_postgres", folder=str(trial.run_dir))
    return server.call(
        "labkit.studies.durability.trials:describe_checkpoints",
        spec=asdict(trial.spec),
        run_dir=trial.run_dir,
        at_kill=at_kill,
    )
