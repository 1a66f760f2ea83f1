"""Lesson 3 on the command line: interrupt and resume run the node again."""

from __future__ import annotations

import argparse

from labkit.cli.common import print_json

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    ir = commands.add_parser("interrupt", help="study 001: interrupt and resume run the node again")
    ir.add_argument("--key", default="fresh", help="fresh (a new UUID per node run) or stable")
    ir.add_argument("--layout", default="combined", help="combined or split")
    ir.add_argument("--cross-process", action="store_true", help="resume in a fresh process")
    ir.add_argument(
        "--kill-at",
        default="none",
        help="none, before_create, after_create or paused (needs --cross-process)",
    )
    ir.add_argument(
        "--reject", action="store_true", help="the person says no: Command(resume=False)"
    )
    ir.add_argument("--json", action="store_true", help="print one JSON object")
    ir.set_defaults(handler=cmd_interrupt)


def cmd_interrupt(args: argparse.Namespace) -> None:
    from labkit.studies.interrupt_resume.experiment import run_interrupt

    result = run_interrupt(
        args.key, args.layout, args.cross_process, args.kill_at, approval=not args.reject
    )
    if args.json:
        print_json(result)
        return
    from labkit.views.text import format_interrupt

    print(format_interrupt(result))
