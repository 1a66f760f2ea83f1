"""Lesson 3 on the command line: interrupt and resume run the node again."""

from __future__ import annotations

import argparse

from labkit.cli.common import print_json
from labkit.language import say

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    ir = commands.add_parser("interrupt", help=say("cli.interrupt_resume.interrupt.help"))
    ir.add_argument("--key", default="fresh", help=say("cli.interrupt_resume.interrupt.key"))
    ir.add_argument(
        "--layout", default="combined", help=say("cli.interrupt_resume.interrupt.layout")
    )
    ir.add_argument(
        "--cross-process",
        action="store_true",
        help=say("cli.interrupt_resume.interrupt.cross_process"),
    )
    ir.add_argument(
        "--kill-at",
        default="none",
        help=say("cli.interrupt_resume.interrupt.kill_at"),
    )
    ir.add_argument(
        "--reject", action="store_true", help=say("cli.interrupt_resume.interrupt.reject")
    )
    ir.add_argument("--json", action="store_true", help=say("cli.interrupt_resume.interrupt.json"))
    ir.set_defaults(handler=cmd_interrupt)


def cmd_interrupt(args: argparse.Namespace) -> None:
    from labkit.studies.interrupt_resume.experiment import run_interrupt

    result = run_interrupt(
        args.key, args.layout, args.cross_process, args.kill_at, approval=not args.reject
    )
    if args.json:
        print_json(result)
        return
    from labkit.views.interrupt_text import format_interrupt

    print(format_interrupt(result))
