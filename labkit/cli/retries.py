"""Lesson 8 on the command line: retries, timeouts, error handlers, drains, the first checkpoint
and the functional API, each a real graph in workers forked from the trial server."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from labkit.cli.common import leave_out, out_option, print_json, progress_bar, whole_number
from labkit.language import say
from labkit.studies.retries.spec import (
    DRAIN_SIGNALS,
    FAILURES,
    FIRST_MODES,
    HANDLER_WAYS,
    KEYS,
    MAX_FIRST_TRIALS,
    MAX_WORK_MS,
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


def seconds(text: str) -> float:
    """An argparse type: a number of seconds (its range is the spec's to check)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of seconds, not {text!r}") from None


def register(commands: argparse._SubParsersAction) -> None:
    retry = commands.add_parser("retry", help=say("cli.retries.retry.help"))
    retry.add_argument(
        "--policy",
        default=RetrySpec.policy,
        help=say("cli.retries.retry.policy", choices=", ".join(POLICIES)),
    )
    retry.add_argument(
        "--key", default=RetrySpec.key, help=say("cli.retries.retry.key", choices=", ".join(KEYS))
    )
    retry.add_argument(
        "--failure",
        default=RetrySpec.failure,
        help=say("cli.retries.retry.failure", choices=", ".join(FAILURES)),
    )
    retry.add_argument(
        "--fail-times",
        type=whole_number("fail-times", 0, 10),
        default=RetrySpec.fail_times,
        help=say("cli.retries.retry.fail_times", fail_times=RetrySpec.fail_times),
    )
    retry.add_argument(
        "--orders",
        type=whole_number("orders", 1, 5),
        default=RetrySpec.orders,
        help=say("cli.retries.retry.orders", orders=RetrySpec.orders),
    )
    retry.add_argument(
        "--async",
        dest="asynchronous",
        action="store_true",
        help=say("cli.retries.retry.async"),
    )
    retry.add_argument(
        "--defaults",
        action="store_true",
        help=say("cli.retries.retry.defaults"),
    )
    out_option(retry)
    retry.add_argument("--json", action="store_true", help=say("cli.retries.retry.json"))
    retry.set_defaults(handler=cmd_retry)

    handler = commands.add_parser("error-handler", help=say("cli.retries.error_handler.help"))
    handler.add_argument(
        "--way",
        default="add_node",
        help=say("cli.retries.error_handler.way", choices=", ".join(HANDLER_WAYS)),
    )
    handler.add_argument(
        "--keyed", action="store_true", help=say("cli.retries.error_handler.keyed")
    )
    out_option(handler)
    handler.add_argument("--json", action="store_true", help=say("cli.retries.error_handler.json"))
    handler.set_defaults(handler=cmd_handler)

    drain = commands.add_parser("drain", help=say("cli.retries.drain.help"))
    drain.add_argument(
        "--signal",
        default="term",
        help=say("cli.retries.drain.signal", choices=", ".join(DRAIN_SIGNALS)),
    )
    drain.add_argument(
        "--grace",
        type=seconds,
        default=DrainSpec.grace,
        help=say("cli.retries.drain.grace", grace=DrainSpec.grace),
    )
    drain.add_argument(
        "--work-ms",
        type=whole_number("work-ms", 0, MAX_WORK_MS),
        default=300,
        help=say("cli.retries.drain.work_ms"),
    )
    drain.add_argument(
        "--no-handler",
        dest="drain_safe",
        action="store_false",
        help=say("cli.retries.drain.no_handler"),
    )
    out_option(drain)
    drain.add_argument("--json", action="store_true", help=say("cli.retries.drain.json"))
    drain.set_defaults(handler=cmd_drain)

    first = commands.add_parser("first-checkpoint", help=say("cli.retries.first_checkpoint.help"))
    first.add_argument(
        "--mode",
        default=ALL_MODES,
        help=say("cli.retries.first_checkpoint.mode", choices=", ".join((*FIRST_MODES, ALL_MODES))),
    )
    first.add_argument(
        "--trials",
        type=whole_number("trials", 1, MAX_FIRST_TRIALS),
        default=200,
        help=say("cli.retries.first_checkpoint.trials", max_first_trials=MAX_FIRST_TRIALS),
    )
    first.add_argument("--json", action="store_true", help=say("cli.retries.first_checkpoint.json"))
    first.set_defaults(handler=cmd_first_checkpoint)

    func = commands.add_parser("functional", help=say("cli.retries.functional.help"))
    func.add_argument(
        "--ref-in-task", action="store_true", help=say("cli.retries.functional.ref_in_task")
    )
    out_option(func)
    func.add_argument("--json", action="store_true", help=say("cli.retries.functional.json"))
    func.set_defaults(handler=cmd_functional)


def show(result: object, format_text: Callable[[object], str], as_json: bool) -> None:
    """The result as one line of JSON, or as the view's text."""
    if as_json:
        print_json(result)
    else:
        print(format_text(result))


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
        print(format_first_checkpoint(results))


def cmd_functional(args: argparse.Namespace) -> None:
    from labkit.studies.retries.experiment import run_functional
    from labkit.views.retries import format_functional

    result = run_functional(args.ref_in_task, out=args.out)
    show(result, format_functional, args.json)
