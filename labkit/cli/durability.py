"""Lesson 4 on the command line: SIGKILL inside a LangGraph node, and study 004's pitfalls."""

from __future__ import annotations

import argparse
import textwrap

from labkit.cli.common import Command, echo, print_json, progress_bar
from labkit.language import say
from labkit.studies.durability.experiment import MAX_SLOW_MS, MAX_TRIALS
from labkit.studies.durability.pitfalls import PITFALLS, run_pitfall

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    trials = Command(commands, "durability", "durability", cmd_durability)
    trials.add("--graph", default="linear").add("--mode", default="sync")
    trials.number("--slow-ms", 0, MAX_SLOW_MS, 0, max_slow_ms=MAX_SLOW_MS)
    trials.add("--kill-moment", default="target_starts")
    trials.number("--trials", 1, MAX_TRIALS, 4, max_trials=MAX_TRIALS).json()

    Command(commands, "durability", "in-memory", cmd_in_memory).json()
    Command(commands, "durability", "library", cmd_library).json()
    Command(commands, "durability", "pitfall", cmd_pitfall).choice("name", PITFALLS, "pitfall")


def cmd_durability(args: argparse.Namespace) -> None:
    from labkit.studies.durability.experiment import DurabilitySpec, run_trials

    spec = DurabilitySpec(args.graph, args.mode, args.slow_ms, args.kill_moment)
    bar, advance = progress_bar("trials", "kill")
    with bar:
        trials = run_trials([spec], args.trials, progress=advance)
    if args.json:
        print_json([t.summary() for t in trials])
        return
    from labkit.views.durability_trials import format_trials

    echo(format_trials(trials))


def cmd_in_memory(args: argparse.Namespace) -> None:
    from labkit.studies.durability.in_memory import run_in_memory_restart

    r = run_in_memory_restart()
    if args.json:
        print_json(r)
        return
    echo(say("cli.said.in_memory_before", n=r["checkpoints_before_kill"]))
    echo(say("cli.said.first_exit", code=r["first_exit"]))
    echo(say("cli.said.in_memory_after", n=r["checkpoints_after_restart"]))
    echo(say("cli.said.invoke_none", what=r["recovery_error"] or say("cli.said.resumed")))
    echo(say("cli.said.run_folder", folder=r["run_dir"]))
    if r["failure"]:
        echo(say("cli.said.failed", failure=r["failure"]))


def cmd_library(args: argparse.Namespace) -> None:
    from labkit.studies.durability.library import durability_in_library

    facts = durability_in_library()
    if args.json:
        print_json(facts)
        return
    for what in ("literal_at", "default_at"):
        place = facts[what]
        echo(say("cli.said.line_at", file=place["file"], line=place["line"], text=place["text"]))
    echo(say("cli.said.default", default=facts["default"], version=facts["version"]))
    echo(say("cli.said.definitions_in", where=facts["definitions_in"]))
    for text in facts["definitions"].values():
        echo(f"  {text}")


def cmd_pitfall(args: argparse.Namespace) -> None:
    report = run_pitfall(args.name)
    echo(say(f"durability.pitfall.{args.name}.title"))
    raised = report["raised"]
    outcome = report["outcome"]
    if raised:
        echo("  " + say("durability.pitfall.today", today=f"{raised['type']}: {raised['message']}"))
    elif isinstance(outcome, list):  # one record per case, e.g. each durability spelling
        from labkit.views.text import format_records

        echo(
            "  "
            + say("durability.pitfall.today", today=say("durability.pitfall.no_exception"))
            + "\n"
        )
        echo(textwrap.indent(format_records(outcome), "    ") + "\n")
    else:
        no_exception = say("cli.said.no_exception", outcome=outcome)
        echo("  " + say("durability.pitfall.today", today=no_exception))
    for warning in report["warnings"]:
        echo("  " + say("durability.pitfall.warning", warning=warning))
    said = say(f"durability.pitfall.{args.name}.said")
    echo("  " + say("durability.pitfall.study_saw", said=said))
