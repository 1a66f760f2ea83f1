"""Lesson 8 from the kernel or the CLI: every section is one call to the trial server, which
forks the workers and reads their files back. Never imports LangGraph: bad input is refused
here, in one line, before the server starts.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from labkit.bench import server
from labkit.bench.errors import check_choices, check_folder, check_function
from labkit.bench.folders import check_run_dir
from labkit.bench.started import call_in_steps
from labkit.studies.retries.spec import (
    FIRST_MODES,
    DrainSpec,
    FirstCheckpointSpec,
    FunctionalSpec,
    HandlerSpec,
    RetrySpec,
)

__all__ = [
    "default_retry_table",
    "first_checkpoint",
    "first_checkpoint_modes",
    "run_drain",
    "run_functional",
    "run_handler",
    "run_retry",
    "sync_timeout_refusal",
]

STUDY = "labkit.studies.retries."
Progress = Callable[[int, int, dict], None]


def call(function: str, spec: object, out: Path | str | None, prefix: str, **more) -> dict:
    """Check the output folder, then run `function` in the trial server on the spec."""
    out = check_folder("out", out)
    check_run_dir(out, prefix, deepest="trial-2000/checkpoints.db-journal")
    return server.call(STUDY + function, spec=spec.to_json(), out=str(out) if out else None, **more)


def default_retry_table(progress: Progress | None = None) -> list[dict]:
    """Which errors `RetryPolicy()` retries, asked of the installed LangGraph now: one dict per
    error (its class, an HTTP status where it has one, and `retried`). The lesson's first call,
    which starts the trial server: `progress` hears of it in steps (`bench.started`)."""
    return call_in_steps(STUDY + "payments:default_retry_table", progress)


def sync_timeout_refusal() -> str | None:
    """LangGraph's own answer to a TimeoutPolicy on a sync node (its error line), asked now."""
    return server.call(STUDY + "payments:sync_timeout_refusal")


def run_retry(
    policy: str = "default",
    key: str = "uuid4",
    failure: str = "reset",
    *,
    fail_times: int = 1,
    max_attempts: int = 3,
    orders: int = 2,
    asynchronous: bool = False,
    out: Path | str | None = None,
) -> dict:
    """Charge each order through a payment node that fails after its charge, retried under
    `policy` (spec.POLICIES) with the idempotency key `key` (spec.KEYS). `asynchronous`: an
    async node under TimeoutPolicy whose first reply is late. Per order: attempts, new
    charges, receipt or error, and its outcome word; every charge the service holds."""
    spec = RetrySpec(policy, key, failure, fail_times, max_attempts, orders, asynchronous)
    return call("runs:run_retry", spec, out, "retry-")


def run_handler(way: str = "add_node", keyed: bool = False, out: Path | str | None = None) -> dict:
    """Issue #9002: the error handler refunds; the run stops at an interrupt beside it; a fresh
    process resumes. How often the handler ran in each process, and the refunds paid."""
    return call("runs:run_handler", HandlerSpec(way, keyed), out, "handler-")


def run_drain(
    signal: str = "term",
    *,
    grace: float = 2.0,
    work_ms: int = 300,
    drain_safe: bool = True,
    serve_source: str | None = None,
    fails: bool = False,
    out: Path | str | None = None,
) -> dict:
    """Stop a → b → c → d while b works (spec.DRAIN_SIGNALS), then resume in a fresh process:
    how the first process ended, what it had saved, which nodes each process ran. `fails`:
    node a fails by itself first (a run no stop ends)."""
    spec = DrainSpec(signal, grace, work_ms, drain_safe, serve_source, fails=fails)
    return call("runs:run_drain", spec, out, "drain-")


def run_functional(
    ref_in_task: bool = False, out: Path | str | None = None, writes_delay_ms: int = 0
) -> dict:
    """The functional API, killed inside its `ship` task and resumed: what ran again. The kill
    comes once the tasks that finished have their results saved, each `writes_delay_ms` late."""
    spec = FunctionalSpec(ref_in_task, writes_delay_ms)
    return call("runs:run_functional", spec, out, "functional-")


def first_checkpoint(
    mode: str = "async",
    trials: int = 200,
    out: Path | str | None = None,
    progress: Progress | None = None,
    margin: float = 0.0,
) -> dict:
    """Issue #8764: `trials` accepted runs of one durability mode, each killed at its first
    node's first line and recovered: what the file held at the kill, how many runs were lost.
    With a `margin` (0.1: ten percentage points), it stops as soon as the 95 % interval of the
    lost share is that narrow either side (`sequential`), after at least 20 trials; `trials`
    is then the most it runs. `progress(done, most, trial)` is called after every trial."""
    spec = FirstCheckpointSpec(mode, trials, margin=margin)
    check_function("progress", progress)
    return call(
        "distribution:first_checkpoint_trials",
        spec,
        out,
        f"first-checkpoint-{mode}-",
        **({"progress": progress} if progress else {}),
    )


def first_checkpoint_modes(
    modes: tuple[str, ...] = FIRST_MODES,
    trials: int = 200,
    progress: Progress | None = None,
    margin: float = 0.0,
) -> dict[str, dict]:
    """`first_checkpoint` for every mode, one after another, each in a new folder of the runs
    home; `progress(done, total, trial)` counts across all of them (`total`: the most that can
    run, as a mode given a `margin` may stop early)."""
    modes = check_choices("durability mode", modes, FIRST_MODES)
    specs = [FirstCheckpointSpec(mode, trials, margin=margin) for mode in modes]  # checked first
    check_function("progress", progress)
    results: dict[str, dict] = {}
    for n, spec in enumerate(specs):
        relay = None
        if progress:
            before = sum(result["trials"] for result in results.values())
            most = before + (len(specs) - n) * trials

            def relay(done: int, _: int, trial: dict, before=before, most=most) -> None:
                progress(before + done, most, trial)

        results[spec.mode] = first_checkpoint(spec.mode, trials, progress=relay, margin=margin)
    return results
