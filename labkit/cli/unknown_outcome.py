"""Lesson 5 on the command line: a remote call whose outcome is unknown, one or every way."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from labkit.bench.errors import check_choice, refusal
from labkit.cli.common import Command, echo, progress_bar, seconds, show, step_through
from labkit.keypress import read_key
from labkit.language import say
from labkit.studies.unknown_outcome.spec import FAULTS, STRATEGIES

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    call = Command(commands, "unknown_outcome", "call", cmd_call)
    call.choice("--strategy", STRATEGIES, default="reconcile")
    call.choice("--fault", FAULTS, default="reply_lost")
    call.add("--timeout", type=seconds, default=0.2).out().json().switch("--step")

    calls = Command(commands, "unknown_outcome", "call-sweep", cmd_call_sweep)
    calls.add("--timeout", type=seconds, default=0.2).out("sweep").json()


def cmd_call(args: argparse.Namespace, answer: Callable[[str], str] = read_key) -> None:
    from labkit.studies.unknown_outcome.experiment import run_call
    from labkit.views.call_text import format_call

    check_choice("strategy", args.strategy, STRATEGIES)  # "custom" takes Python code
    if args.step:
        from labkit.studies.unknown_outcome.caller import CALLER_POINTS
        from labkit.studies.unknown_outcome.spec import CallSpec
        from labkit.studies.unknown_outcome.stepping import CallStepSession

        if args.json:
            raise refusal("step_no_json_call")
        if args.timeout != CallSpec.timeout:
            raise refusal("step_timeout", timeout=CallSpec.timeout)
        with CallStepSession(args.strategy, args.fault, args.out) as session:
            fault = FAULTS[args.fault]
            echo(say("cli.step.caller", strategy=args.strategy, fault=args.fault, what=fault))
            echo(say("cli.step.caller_stops", points=" → ".join(CALLER_POINTS)))
            if step_through(session, answer):
                echo("\n" + format_call(session.recover()))
        return
    result = run_call(args.strategy, args.fault, args.timeout, args.out)
    show(result, format_call, args.json)


def cmd_call_sweep(args: argparse.Namespace) -> None:
    from labkit.studies.unknown_outcome.experiment import sweep_calls
    from labkit.views.call_text import format_call_sweep

    bar, advance = progress_bar("calls", "call")
    with bar:
        results = sweep_calls(timeout=args.timeout, out=args.out, progress=advance)
    show(results, format_call_sweep, args.json)
