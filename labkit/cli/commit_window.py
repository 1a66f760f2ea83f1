"""Lessons 1 and 2 on the command line: the write orders, one crash, the sweep, step mode."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from labkit.cli.common import out_option, print_json, progress_bar, step_keys, step_through
from labkit.keypress import read_key
from labkit.studies.commit_window.orders import NO_KILL, ORDERS, get_order
from labkit.studies.commit_window.runs import run
from labkit.studies.commit_window.spec import KILL_MODES
from labkit.studies.commit_window.sweeps import sweep
from labkit.studies.commit_window.tool_runs import run_tool_step
from labkit.studies.commit_window.tool_steps import TOOL_STEPS

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    orders = commands.add_parser("orders", help="list the write orders and their kill points")
    orders.set_defaults(handler=cmd_orders)

    one = commands.add_parser("run", help="crash one worker at a kill point, then recover")
    one.add_argument("order", help=f"one of: {', '.join(ORDERS)}")
    one.add_argument("--kill-at", default=NO_KILL, help="a kill point of the order, or none")
    one.add_argument("--kill-mode", default="exit", help=f"one of: {', '.join(KILL_MODES)}")
    out_option(one)
    one.add_argument("--json", action="store_true", help="print one JSON object")
    one.set_defaults(handler=cmd_run)

    many = commands.add_parser("sweep", help="every order at every kill point")
    many.add_argument("--kill-mode", default="exit", help=f"one of: {', '.join(KILL_MODES)}, both")
    out_option(many, "sweep")
    many.add_argument("--json", action="store_true", help="print a JSON list")
    many.set_defaults(handler=cmd_sweep)

    tool = commands.add_parser(
        "tool-step", help="study 000's closing section: a queue pop, a claim, a pending state"
    )
    tool.add_argument("step", help=f"one of: {', '.join(TOOL_STEPS)}")
    tool.add_argument("--kill-at", default=NO_KILL, help="a kill point of the step, or none")
    tool.add_argument("--kill-mode", default="exit", help=f"one of: {', '.join(KILL_MODES)}")
    out_option(tool)
    tool.add_argument("--json", action="store_true", help="print one JSON object")
    tool.set_defaults(handler=cmd_tool_step)

    step = commands.add_parser(
        "step", help="pause at each kill point: Enter goes on, k kills, q quits"
    )
    step.add_argument("order", help=f"one of: {', '.join(ORDERS)}")
    out_option(step)
    step.set_defaults(handler=cmd_step, step=True)


def cmd_orders(args: argparse.Namespace) -> None:
    from labkit.views.text import format_grid

    rows = [
        (o.name, " ".join(o.files), " ".join(o.kill_points), o.summary) for o in ORDERS.values()
    ]
    print(format_grid(("order", "files", "kill points", "what it does"), rows))


def cmd_tool_step(args: argparse.Namespace) -> None:
    from labkit.views.text import format_tool_run

    result = run_tool_step(args.step, args.kill_at, args.kill_mode, args.out)
    if args.json:
        print_json(result.summary())
    else:
        print(format_tool_run(result))


def cmd_run(args: argparse.Namespace) -> None:
    from labkit.views.text import format_run

    result = run(args.order, args.kill_at, args.kill_mode, args.out)
    if args.json:
        print_json(result.summary())
    else:
        print(format_run(result))


def cmd_sweep(args: argparse.Namespace) -> None:
    from labkit.views.text import format_sweep

    modes = KILL_MODES if args.kill_mode == "both" else (args.kill_mode,)
    bar, advance = progress_bar("sweep", "run")
    with bar:
        results = sweep(modes, args.out, progress=advance)
    if args.json:
        print_json([r.summary() for r in results])
    else:
        print(format_sweep(results))


def cmd_step(args: argparse.Namespace, answer: Callable[[str], str] = read_key) -> None:
    """For a projector: show the files at each stop; one key goes on, kills there, or quits."""
    from labkit.studies.commit_window.stepping import StepSession
    from labkit.views.text import format_run

    order = get_order(args.order)
    with StepSession(order.name, args.out) as session:
        print(f"{order.name}: {order.summary}")
        print(f"kill points: {' → '.join(order.kill_points)}")
        print(f"keys: {step_keys(session)}")
        if step_through(session, answer):
            print("\n" + format_run(session.recover()))
