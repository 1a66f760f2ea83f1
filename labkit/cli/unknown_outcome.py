"""Lesson 5 on the command line: a remote call whose outcome is unknown, one or every way."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from labkit.bench.errors import LabError
from labkit.cli.common import out_option, print_json, progress_bar, step_through
from labkit.keypress import read_key
from labkit.language import say
from labkit.studies.unknown_outcome.spec import FAULTS, STRATEGIES

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    call = commands.add_parser("call", help=say("cli.unknown_outcome.call.help"))
    call.add_argument(
        "--strategy",
        default="reconcile",
        help=say("cli.unknown_outcome.call.strategy", choices=", ".join(STRATEGIES)),
    )
    call.add_argument(
        "--fault",
        default="reply_lost",
        help=say("cli.unknown_outcome.call.fault", choices=", ".join(FAULTS)),
    )
    call.add_argument(
        "--timeout", type=float, default=0.2, help=say("cli.unknown_outcome.call.timeout")
    )
    out_option(call)
    call.add_argument("--json", action="store_true", help=say("cli.unknown_outcome.call.json"))
    call.add_argument("--step", action="store_true", help=say("cli.unknown_outcome.call.step"))
    call.set_defaults(handler=cmd_call)

    calls = commands.add_parser("call-sweep", help=say("cli.unknown_outcome.call_sweep.help"))
    calls.add_argument(
        "--timeout", type=float, default=0.2, help=say("cli.unknown_outcome.call_sweep.timeout")
    )
    out_option(calls, "sweep")
    calls.add_argument(
        "--json", action="store_true", help=say("cli.unknown_outcome.call_sweep.json")
    )
    calls.set_defaults(handler=cmd_call_sweep)


def cmd_call(args: argparse.Namespace, answer: Callable[[str], str] = read_key) -> None:
    from labkit.studies.unknown_outcome.experiment import run_call
    from labkit.views.call_text import format_call

    if args.step:
        from labkit.studies.unknown_outcome.caller import CALLER_POINTS
        from labkit.studies.unknown_outcome.spec import CallSpec
        from labkit.studies.unknown_outcome.stepping import CallStepSession

        if args.json:
            raise LabError(say("cli.error.step_no_json_call"))
        if args.timeout != CallSpec.timeout:
            raise LabError(say("cli.error.step_timeout", timeout=CallSpec.timeout))
        with CallStepSession(args.strategy, args.fault, args.out) as session:
            fault = FAULTS[args.fault]
            print(say("cli.step.caller", strategy=args.strategy, fault=args.fault, what=fault))
            print(say("cli.step.caller_stops", points=" → ".join(CALLER_POINTS)))
            if step_through(session, answer):
                print("\n" + format_call(session.recover()))
        return
    result = run_call(args.strategy, args.fault, args.timeout, args.out)
    if args.json:
        print_json(result.summary())
    else:
        print(format_call(result))


def cmd_call_sweep(args: argparse.Namespace) -> None:
    from labkit.studies.unknown_outcome.experiment import sweep_calls
    from labkit.views.call_text import format_call_sweep

    bar, advance = progress_bar("calls", "call")
    with bar:
        results = sweep_calls(timeout=args.timeout, out=args.out, progress=advance)
    if args.json:
        print_json([r.summary() for r in results])
    else:
        print(format_call_sweep(results))
