"""Lesson 3 on the command line: interrupt and resume run the node again."""

from __future__ import annotations

import argparse

from labkit.cli.common import Command, echo, print_json

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    resume = Command(commands, "interrupt_resume", "interrupt", cmd_interrupt)
    resume.add("--key", default="fresh").add("--layout", default="combined")
    resume.switch("--cross-process").add("--kill-at", default="none").switch("--reject").json()


def cmd_interrupt(args: argparse.Namespace) -> None:
    from labkit.studies.interrupt_resume.experiment import run_interrupt

    result = run_interrupt(
        args.key, args.layout, args.cross_process, args.kill_at, approval=not args.reject
    )
    if args.json:
        print_json(result)
        return
    from labkit.views.interrupt_text import format_interrupt

    echo(format_interrupt(result))
