"""Lessons 1 and 2 on the command line: the write orders, one crash, the sweep, step mode."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from labkit.cli.common import out_option, print_json, progress_bar, step_through
from labkit.keypress import read_key
from labkit.language import say
from labkit.studies.commit_window.orders import NO_KILL, ORDERS, get_order
from labkit.studies.commit_window.runs import run
from labkit.studies.commit_window.spec import KILL_MODES
from labkit.studies.commit_window.sweeps import sweep
from labkit.studies.commit_window.tool_runs import run_tool_step
from labkit.studies.commit_window.tool_steps import TOOL_STEPS

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    orders = commands.add_parser("orders", help=say("cli.commit_window.orders.help"))
    orders.set_defaults(handler=cmd_orders)

    one = commands.add_parser("run", help=say("cli.commit_window.run.help"))
    one.add_argument("order", help=say("cli.commit_window.run.order", choices=", ".join(ORDERS)))
    one.add_argument("--kill-at", default=NO_KILL, help=say("cli.commit_window.run.kill_at"))
    one.add_argument(
        "--kill-mode",
        default="exit",
        help=say("cli.commit_window.run.kill_mode", choices=", ".join(KILL_MODES)),
    )
    out_option(one)
    one.add_argument("--json", action="store_true", help=say("cli.commit_window.run.json"))
    one.set_defaults(handler=cmd_run)

    many = commands.add_parser("sweep", help=say("cli.commit_window.sweep.help"))
    many.add_argument(
        "--kill-mode",
        default="exit",
        help=say("cli.commit_window.sweep.kill_mode", choices=", ".join(KILL_MODES)),
    )
    out_option(many, "sweep")
    many.add_argument("--json", action="store_true", help=say("cli.commit_window.sweep.json"))
    many.set_defaults(handler=cmd_sweep)

    tool = commands.add_parser("tool-step", help=say("cli.commit_window.tool_step.help"))
    tool.add_argument(
        "step", help=say("cli.commit_window.tool_step.step", choices=", ".join(TOOL_STEPS))
    )
    tool.add_argument("--kill-at", default=NO_KILL, help=say("cli.commit_window.tool_step.kill_at"))
    tool.add_argument(
        "--kill-mode",
        default="exit",
        help=say("cli.commit_window.tool_step.kill_mode", choices=", ".join(KILL_MODES)),
    )
    out_option(tool)
    tool.add_argument("--json", action="store_true", help=say("cli.commit_window.tool_step.json"))
    tool.set_defaults(handler=cmd_tool_step)

    step = commands.add_parser("step", help=say("cli.commit_window.step.help"))
    step.add_argument("order", help=say("cli.commit_window.step.order", choices=", ".join(ORDERS)))
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
        print(say("cli.step.kill_points", points=" → ".join(order.kill_points)))
        if step_through(session, answer):
            print("\n" + format_run(session.recover()))
