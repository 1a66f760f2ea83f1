"""Lessons 1 and 2 on the command line: the write orders, one crash, the sweep, step mode."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from labkit.cli.common import Command, echo, progress_bar, show, step_through
from labkit.keypress import read_key
from labkit.language import say
from labkit.studies.commit_window.orders import NO_KILL, ORDERS, get_order
from labkit.studies.commit_window.runs import run
from labkit.studies.commit_window.spec import KILL_MODES
from labkit.studies.commit_window.sweeps import sweep
from labkit.studies.commit_window.tool_runs import run_tool_step
from labkit.studies.commit_window.tool_steps import TOOL_STEPS
from labkit.views.commit_window_words import order_summary

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    Command(commands, "commit_window", "orders", cmd_orders)

    one = Command(commands, "commit_window", "run", cmd_run).choice("order", ORDERS, "write order")
    one.add("--kill-at", default=NO_KILL).choice("--kill-mode", KILL_MODES, default="exit")
    one.out().json()

    many = Command(commands, "commit_window", "sweep", cmd_sweep)
    many.choice("--kill-mode", KILL_MODES, default="exit").out("sweep").json()

    tool = Command(commands, "commit_window", "tool-step", cmd_tool_step)
    tool.choice("step", TOOL_STEPS, "tool step")
    tool.add("--kill-at", default=NO_KILL).choice("--kill-mode", KILL_MODES, default="exit")
    tool.out().json()

    stepped = Command(commands, "commit_window", "step", cmd_step, step=True)
    stepped.choice("order", ORDERS, "write order").out()


def cmd_orders(args: argparse.Namespace) -> None:
    from labkit.views.tables import headers
    from labkit.views.text import format_grid

    rows = [
        (o.name, " ".join(o.files), " ".join(o.kill_points), order_summary(o))
        for o in ORDERS.values()
    ]
    echo(format_grid(headers("tables.orders", ("order", "files", "kill_points", "does")), rows))


def cmd_tool_step(args: argparse.Namespace) -> None:
    from labkit.views.text import format_tool_run

    result = run_tool_step(args.step, args.kill_at, args.kill_mode, args.out)
    show(result, format_tool_run, args.json)


def cmd_run(args: argparse.Namespace) -> None:
    from labkit.views.text import format_run

    result = run(args.order, args.kill_at, args.kill_mode, args.out)
    show(result, format_run, args.json)


def cmd_sweep(args: argparse.Namespace) -> None:
    from labkit.views.text import format_sweep

    modes = KILL_MODES if args.kill_mode == "both" else (args.kill_mode,)
    bar, advance = progress_bar("sweep", "run")
    with bar:
        results = sweep(modes, args.out, progress=advance)
    show(results, format_sweep, args.json)


def cmd_step(args: argparse.Namespace, answer: Callable[[str], str] = read_key) -> None:
    """For a projector: show the files at each stop; one key goes on, kills there, or quits."""
    from labkit.studies.commit_window.stepping import StepSession
    from labkit.views.text import format_run

    order = get_order(args.order)
    with StepSession(order.name, args.out) as session:
        echo(f"{order.name}: {order_summary(order)}")
        echo(say("cli.step.kill_points", points=" → ".join(order.kill_points)))
        if step_through(session, answer):
            echo("\n" + format_run(session.recover()))
