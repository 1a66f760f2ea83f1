"""Lesson 5's outbox on the command line: one run, the sweep, step mode, the LangGraph replay."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from labkit.bench.errors import check_choice, refusal
from labkit.cli.common import (
    Command,
    echo,
    leave_out,
    print_json,
    progress_bar,
    show,
    step_through,
)
from labkit.keypress import read_key
from labkit.language import say
from labkit.studies.outbox.experiment import CONSUMERS, OUTBOX_KILL_POINTS

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    box = Command(commands, "outbox", "outbox", cmd_outbox)
    box.choice("--consumer", CONSUMERS, default="plain")
    how = box.parser.add_mutually_exclusive_group()
    box.choice("--kill-at", OUTBOX_KILL_POINTS, among=how, default="none")
    box.switch("--sweep", among=how).switch("--step", among=how).switch("--graph", among=how)
    box.out().json()


def cmd_outbox(args: argparse.Namespace, answer: Callable[[str], str] = read_key) -> None:
    from labkit.studies.outbox.experiment import OutboxSpec, execute_outbox

    check_choice("consumer", args.consumer, CONSUMERS)  # "yours" takes Python code
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
        show(result, format_outbox, args.json)


def show_sweep(args: argparse.Namespace) -> None:
    from labkit.studies.outbox.experiment import outbox_sweep
    from labkit.views.outbox import format_outbox_sweep

    if args.consumer != "plain":
        leave_out("outbox_sweep", {"--consumer": True})
    bar, advance = progress_bar("outbox_sweep", "run")
    with bar:
        results = outbox_sweep(args.out, progress=advance)
    show(results, format_outbox_sweep, args.json)


def show_graph_replay(args: argparse.Namespace) -> None:
    from labkit.studies.outbox.replay import run_outbox_graph
    from labkit.views.commit_window_words import outcome_name
    from labkit.views.text import process_exits

    r = run_outbox_graph(args.consumer, args.out)
    if args.json:
        print_json(r)
        return
    wrote = {True: say("outbox.graph.order_and_message"), False: say("cli.said.nothing")}
    writing = say("cli.said.then").join(wrote[ln["wrote_order"]] for ln in r["ledger"])
    echo(say("cli.said.graph_killed", consumer=args.consumer))
    echo("  " + say("cli.said.node_runs", n=r["node_runs"], writing=writing))
    echo("  " + say("cli.said.processes", exits=process_exits(r["exits"])))
    a, n = r["after"], r["deliveries"]
    echo("  " + say("cli.said.outbox_rows", outbox=a["outbox"], n=n, effects=a["effects"]))
    failure = say("cli.said.because", failure=r["failure"]) if r["failure"] else ""
    echo("  " + say("cli.said.outcome", outcome=outcome_name(r["outcome"])) + failure)
    echo("  " + say("cli.said.run_folder", folder=r["run_dir"]))


def step_outbox(args: argparse.Namespace, answer: Callable[[str], str]) -> None:
    from labkit.studies.outbox.stepping import STOPS, OutboxStepSession
    from labkit.views.outbox import format_outbox

    if args.json:
        raise refusal("step_no_json")
    with OutboxStepSession(args.consumer, args.out) as session:
        echo(say("cli.step.consumer", consumer=args.consumer, what=CONSUMERS[args.consumer]))
        for stage, points in STOPS.items():
            echo(say("cli.step.stage_stops", stage=stage, points=" → ".join(points)))
        if step_through(session, answer):
            echo("\n" + format_outbox(session.recover()))
