"""Lesson 6 on the command line: two workers race for one task (one race, the sweep, step
mode), and two processes resume one LangGraph thread."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from labkit.bench.errors import refusal
from labkit.cli.common import Command, echo, leave_out, progress_bar, show, step_through
from labkit.keypress import read_key
from labkit.language import say
from labkit.studies.leases.resume import GRAPH_CASES
from labkit.studies.leases.spec import MAX_MS, METHODS, ClaimSpec

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    claim = Command(commands, "leases", "claim", cmd_claim)
    claim.choice("--method", METHODS, default=ClaimSpec.method)
    claim.number("--pause-ms", 0, MAX_MS, ClaimSpec.pause_ms, pause_ms=ClaimSpec.pause_ms)
    claim.number("--lease-ms", 1, MAX_MS, ClaimSpec.lease_ms, lease_ms=ClaimSpec.lease_ms)
    how = claim.parser.add_mutually_exclusive_group()
    claim.switch("--sweep", among=how).switch("--step", among=how)
    claim.choice("--graph", GRAPH_CASES, among=how, nargs="?", const="race", metavar="CASE")
    claim.out().json()


def given(args: argparse.Namespace, *names: str) -> list[str]:
    """The options among `names` the reader changed from their defaults."""
    defaults = {"method": ClaimSpec.method, "pause_ms": ClaimSpec.pause_ms}
    defaults["lease_ms"] = ClaimSpec.lease_ms
    return [f"--{n.replace('_', '-')}" for n in names if getattr(args, n) != defaults[n]]


def cmd_claim(args: argparse.Namespace, answer: Callable[[str], str] = read_key) -> None:
    spec = ClaimSpec(args.method, args.pause_ms, args.lease_ms)  # bad input: one line, status 2
    if args.sweep:
        show_sweep(args)
    elif args.graph is not None:
        show_graph(args)
    elif args.step:
        step_claim(spec, args, answer)
    else:
        from labkit.studies.leases.experiment import run_claim
        from labkit.views.leases import format_claim

        result = run_claim(spec.method, spec.pause_ms, spec.lease_ms, args.out)
        show(result, format_claim, args.json)


def show_sweep(args: argparse.Namespace) -> None:
    from labkit.studies.leases.experiment import sweep_claims
    from labkit.views.leases import format_claim_sweep

    extra = given(args, "method", "pause_ms")
    if extra:
        leave_out("claim_sweep", dict.fromkeys(extra, True))
    bar, advance = progress_bar("claim_sweep", "race")
    with bar:
        results = sweep_claims(leases=(args.lease_ms,), out=args.out, progress=advance)
    show(results, format_claim_sweep, args.json)


def show_graph(args: argparse.Namespace) -> None:
    from labkit.studies.leases.resume import run_graph_race
    from labkit.views.leases import format_graph_race

    extra = given(args, "method", "pause_ms")
    if extra:
        leave_out("claim_graph", dict.fromkeys(extra, True))
    run = run_graph_race(args.graph, args.lease_ms, args.out)
    show(run, format_graph_race, args.json)


def step_claim(spec: ClaimSpec, args: argparse.Namespace, answer: Callable[[str], str]) -> None:
    """For a projector: the files between two moves of the schedule; k kills the frozen w1."""
    from labkit.studies.leases.stepping import ClaimStepSession
    from labkit.views.leases import format_claim, method_line
    from labkit.views.leases_lines import move_words

    if args.json:
        raise refusal("step_no_json")
    with ClaimStepSession(spec.method, spec.pause_ms, spec.lease_ms, args.out) as session:
        echo(method_line(spec.method))
        echo(say("cli.step.frozen", pause_ms=spec.pause_ms, arrival_ms=spec.arrival_ms))
        if step_through(session, answer, "race", move_words):
            echo("\n" + format_claim(session.recover()))
