"""Lesson 3 on the command line: interrupt and resume run the node again."""

from __future__ import annotations

import argparse

from labkit.bench.errors import check_choice
from labkit.cli.common import Command, echo, print_json

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    resume = Command(commands, "interrupt_resume", "interrupt", cmd_interrupt)
    resume.add("--key", default="fresh").add("--layout", default="combined")
    resume.switch("--cross-process").add("--kill-at", default="none").switch("--reject").json()


def cmd_interrupt(args: argparse.Namespace) -> None:
    from labkit.studies.interrupt_resume.experiment import (
        KEY_STRATEGIES,
        check_kill_point,
        run_interrupt,
    )

    check_choice("key strategy", args.key, KEY_STRATEGIES)  # "custom" takes Python code
    check_kill_point(args.kill_at, args.cross_process, "--cross-process")
    result = run_interrupt(
        args.key, args.layout, args.cross_process, args.kill_at, approval=not args.reject
    )
    if args.json:
        print_json(result)
        return
    from labkit.views.interrupt_text import format_interrupt

    echo(format_interrupt(result))
