"""Lesson 8 on the command line: retries, timeouts, error handlers, drains, the first checkpoint
and the functional API, each a real graph in workers forked from the trial server."""

from __future__ import annotations

import argparse

from labkit.cli.common import (
    Command,
    echo,
    leave_out,
    print_json,
    progress_bar,
    seconds,
    show,
)
from labkit.studies.retries.spec import (
    DRAIN_SIGNALS,
    FAILURES,
    FIRST_MODES,
    HANDLER_WAYS,
    KEYS,
    MAX_FIRST_TRIALS,
    MAX_WORK_MS,
    MAX_WRITES_DELAY_MS,
    POLICIES,
    DrainSpec,
    RetrySpec,
)

__all__ = ["register"]

ALL_MODES = "all"
# A retry run's options, by the RetrySpec field each sets: --defaults starts no run.
RUN_OPTIONS = {
    "policy": "--policy",
    "key": "--key",
    "failure": "--failure",
    "fail_times": "--fail-times",
    "orders": "--orders",
    "asynchronous": "--async",
}


def register(commands: argparse._SubParsersAction) -> None:
    retry = Command(commands, "retries", "retry", cmd_retry)
    retry.choice("--policy", POLICIES, default=RetrySpec.policy)
    retry.choice("--key", KEYS, default=RetrySpec.key)
    retry.choice("--failure", FAILURES, default=RetrySpec.failure)
    retry.number("--fail-times", 0, 10, RetrySpec.fail_times, fail_times=RetrySpec.fail_times)
    retry.number("--orders", 1, 5, RetrySpec.orders, orders=RetrySpec.orders)
    retry.switch("--async", dest="asynchronous").switch("--defaults").out().json()

    handler = Command(commands, "retries", "error-handler", cmd_handler)
    handler.choice("--way", HANDLER_WAYS, default="add_node").switch("--keyed").out().json()

    drain = Command(commands, "retries", "drain", cmd_drain)
    drain.choice("--signal", DRAIN_SIGNALS, default="term")
    drain.add("--grace", type=seconds, default=DrainSpec.grace, fields={"grace": DrainSpec.grace})
    drain.number("--work-ms", 0, MAX_WORK_MS, 300)
    drain.add("--no-handler", dest="drain_safe", action="store_false").out().json()

    first = Command(commands, "retries", "first-checkpoint", cmd_first_checkpoint)
    first.choice("--mode", (*FIRST_MODES, ALL_MODES), default=ALL_MODES)
    first.number("--trials", 1, MAX_FIRST_TRIALS, 200, max_first_trials=MAX_FIRST_TRIALS).json()

    functional = Command(commands, "retries", "functional", cmd_functional)
    functional.switch("--ref-in-task")
    functional.number("--writes-delay-ms", 0, MAX_WRITES_DELAY_MS, 0, most=MAX_WRITES_DELAY_MS)
    functional.out().json()


def cmd_retry(args: argparse.Namespace) -> None:
    from labkit.studies.retries.experiment import default_retry_table, run_retry
    from labkit.views.retries import format_retry, format_retry_table

    spec = RetrySpec(  # bad input is one line (status 2), with --defaults too
        args.policy,
        args.key,
        args.failure,
        args.fail_times,
        orders=args.orders,
        asynchronous=args.asynchronous,
    )
    if args.defaults:
        given = {o: getattr(spec, f) != getattr(RetrySpec, f) for f, o in RUN_OPTIONS.items()}
        given["--out"] = args.out is not None
        leave_out("defaults", given)
        show(default_retry_table(), format_retry_table, args.json)
        return
    result = run_retry(
        args.policy,
        args.key,
        args.failure,
        fail_times=args.fail_times,
        orders=args.orders,
        asynchronous=args.asynchronous,
        out=args.out,
    )
    show(result, format_retry, args.json)


def cmd_handler(args: argparse.Namespace) -> None:
    from labkit.studies.retries.experiment import run_handler
    from labkit.views.retries import format_handler

    result = run_handler(args.way, args.keyed, out=args.out)
    show(result, format_handler, args.json)


def cmd_drain(args: argparse.Namespace) -> None:
    from labkit.studies.retries.experiment import run_drain
    from labkit.views.retries import format_drain

    if args.signal in ("drain", "kill"):
        leave_out("grace", {"--grace": args.grace != DrainSpec.grace}, signal=args.signal)
    result = run_drain(
        args.signal,
        grace=args.grace,
        work_ms=args.work_ms,
        drain_safe=args.drain_safe,
        out=args.out,
    )
    show(result, lambda r: format_drain([r]), args.json)


def cmd_first_checkpoint(args: argparse.Namespace) -> None:
    from labkit.bench.errors import check_choice
    from labkit.studies.retries.experiment import first_checkpoint_modes
    from labkit.views.retries import format_first_checkpoint

    mode = check_choice("durability mode", args.mode, (*FIRST_MODES, ALL_MODES))
    modes = FIRST_MODES if mode == ALL_MODES else (mode,)
    bar, advance = progress_bar("first_checkpoint_trials", "trial")
    with bar:
        results = first_checkpoint_modes(modes, args.trials, progress=advance)
    if args.json:
        print_json({m: {k: v for k, v in r.items() if k != "runs"} for m, r in results.items()})
    else:
        echo(format_first_checkpoint(results))


def cmd_functional(args: argparse.Namespace) -> None:
    from labkit.studies.retries.experiment import run_functional
    from labkit.views.retries import format_functional

    result = run_functional(args.ref_in_task, out=args.out, writes_delay_ms=args.writes_delay_ms)
    show(result, format_functional, args.json)
