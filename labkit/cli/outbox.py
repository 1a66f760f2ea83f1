"""Lesson 5's outbox on the command line: one run, the sweep, step mode, the LangGraph replay."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from labkit.bench.errors import LabError
from labkit.cli.common import (
    leave_out,
    out_option,
    print_json,
    progress_bar,
    step_through,
)
from labkit.keypress import read_key
from labkit.language import say
from labkit.studies.outbox.experiment import CONSUMERS, OUTBOX_KILL_POINTS

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    box = commands.add_parser("outbox", help=say("cli.outbox.outbox.help"))
    box.add_argument(
        "--consumer",
        default="plain",
        help=say("cli.outbox.outbox.consumer", choices=", ".join(CONSUMERS)),
    )
    how = box.add_mutually_exclusive_group()
    how.add_argument(
        "--kill-at",
        default="none",
        help=say("cli.outbox.outbox.kill_at", choices=", ".join(OUTBOX_KILL_POINTS)),
    )
    how.add_argument("--sweep", action="store_true", help=say("cli.outbox.outbox.sweep"))
    how.add_argument("--step", action="store_true", help=say("cli.outbox.outbox.step"))
    how.add_argument("--graph", action="store_true", help=say("cli.outbox.outbox.graph"))
    out_option(box)
    box.add_argument("--json", action="store_true", help=say("cli.outbox.outbox.json"))
    box.set_defaults(handler=cmd_outbox)


def cmd_outbox(args: argparse.Namespace, answer: Callable[[str], str] = read_key) -> None:
    from labkit.studies.outbox.experiment import OutboxSpec, execute_outbox

    spec = OutboxSpec(args.consumer, args.kill_at, args.out)  # bad input: one line, status 2
    if args.sweep:
        show_sweep(args)
    elif args.graph:
        show_graph_replay(args)
    elif args.step:
        step_outbox(args, answer)
    else:
        from labkit.views.outbox import format_outbox

        result = execute_outbox(spec)
        if args.json:
            print_json(result.summary())
        else:
            print(format_outbox(result))


def show_sweep(args: argparse.Namespace) -> None:
    from labkit.studies.outbox.experiment import outbox_sweep
    from labkit.views.outbox import format_outbox_sweep

    if args.consumer != "plain":
        leave_out("outbox_sweep", {"--consumer": True})
    bar, advance = progress_bar("outbox_sweep", "run")
    with bar:
        results = outbox_sweep(args.out, progress=advance)
    if args.json:
        print_json([r.summary() for r in results])
    else:
        print(format_outbox_sweep(results))


def show_graph_replay(args: argparse.Namespace) -> None:
    from labkit.studies.commit_window.outcome import outcome_name
    from labkit.studies.outbox.replay import run_outbox_graph
    from labkit.views.text import process_exits

    r = run_outbox_graph(args.consumer, args.out)
    if args.json:
        print_json(r)
        return
    wrote = {True: say("outbox.graph.order_and_message"), False: say("cli.said.nothing")}
    writing = say("cli.said.then").join(wrote[ln["wrote_order"]] for ln in r["ledger"])
    print(say("cli.said.graph_killed", consumer=args.consumer))
    print("  " + say("cli.said.node_runs", n=r["node_runs"], writing=writing))
    print("  " + say("cli.said.processes", exits=process_exits(r["exits"])))
    a, n = r["after"], r["deliveries"]
    print("  " + say("cli.said.outbox_rows", outbox=a["outbox"], n=n, effects=a["effects"]))
    failure = say("cli.said.because", failure=r["failure"]) if r["failure"] else ""
    print("  " + say("cli.said.outcome", outcome=outcome_name(r["outcome"])) + failure)
    print("  " + say("cli.said.run_folder", folder=r["run_dir"]))


def step_outbox(args: argparse.Namespace, answer: Callable[[str], str]) -> None:
    from labkit.studies.outbox.stepping import STOPS, OutboxStepSession
    from labkit.views.outbox import format_outbox

    if args.json:
        raise LabError(say("cli.error.step_no_json"))
    with OutboxStepSession(args.consumer, args.out) as session:
        print(say("cli.step.consumer", consumer=args.consumer, what=CONSUMERS[args.consumer]))
        for stage, points in STOPS.items():
            print(say("cli.step.stage_stops", stage=stage, points=" → ".join(points)))
        if step_through(session, answer):
            print("\n" + format_outbox(session.recover()))
