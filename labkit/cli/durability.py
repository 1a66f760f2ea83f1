"""Lesson 4 on the command line: SIGKILL inside a LangGraph node, and study 004's pitfalls."""

from __future__ import annotations

import argparse
import textwrap

from labkit.cli.common import print_json, progress_bar, whole_number
from labkit.language import say
from labkit.studies.durability.experiment import MAX_SLOW_MS, MAX_TRIALS
from labkit.studies.durability.pitfalls import PITFALLS, run_pitfall

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    lg = commands.add_parser("durability", help=say("cli.durability.durability.help"))
    lg.add_argument("--graph", default="linear", help=say("cli.durability.durability.graph"))
    lg.add_argument("--mode", default="sync", help=say("cli.durability.durability.mode"))
    lg.add_argument(
        "--slow-ms",
        type=whole_number("slow-ms", 0, MAX_SLOW_MS),
        default=0,
        help=say("cli.durability.durability.slow_ms", max_slow_ms=MAX_SLOW_MS),
    )
    lg.add_argument(
        "--kill-moment",
        default="target_starts",
        help=say("cli.durability.durability.kill_moment"),
    )
    lg.add_argument(
        "--trials",
        type=whole_number("trials", 1, MAX_TRIALS),
        default=4,
        help=say("cli.durability.durability.trials", max_trials=MAX_TRIALS),
    )
    lg.add_argument("--json", action="store_true", help=say("cli.durability.durability.json"))
    lg.set_defaults(handler=cmd_durability)

    memory = commands.add_parser("in-memory", help=say("cli.durability.in_memory.help"))
    memory.add_argument("--json", action="store_true", help=say("cli.durability.in_memory.json"))
    memory.set_defaults(handler=cmd_in_memory)

    library = commands.add_parser("library", help=say("cli.durability.library.help"))
    library.add_argument("--json", action="store_true", help=say("cli.durability.library.json"))
    library.set_defaults(handler=cmd_library)

    gallery = commands.add_parser("pitfall", help=say("cli.durability.pitfall.help"))
    gallery.add_argument(
        "name", help=say("cli.durability.pitfall.name", choices=", ".join(PITFALLS))
    )
    gallery.set_defaults(handler=cmd_pitfall)


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

    print(format_trials(trials))


def cmd_in_memory(args: argparse.Namespace) -> None:
    from labkit.studies.durability.in_memory import run_in_memory_restart

    r = run_in_memory_restart()
    if args.json:
        print_json(r)
        return
    print(f"checkpoints in memory when c started: {r['checkpoints_before_kill']}")
    print(f"first process exit: {r['first_exit']}")
    print(f"checkpoints the restarted process found: {r['checkpoints_after_restart']}")
    print(f"invoke(None): {r['recovery_error'] or 'resumed'}")
    print(f"run folder: {r['run_dir']}" + (f"\nFAILED: {r['failure']}" if r["failure"] else ""))


def cmd_library(args: argparse.Namespace) -> None:
    from labkit.studies.durability.library import durability_in_library

    facts = durability_in_library()
    if args.json:
        print_json(facts)
        return
    for what in ("literal_at", "default_at"):
        place = facts[what]
        print(f"{place['file']} line {place['line']}: {place['text']}")
    print(f"the default when none is given: {facts['default']} (langgraph {facts['version']})")
    print(f"{facts['definitions_in']}:")
    for text in facts["definitions"].values():
        print(f"  {text}")


def cmd_pitfall(args: argparse.Namespace) -> None:
    report = run_pitfall(args.name)
    print(PITFALLS[args.name].title)
    raised = report["raised"]
    outcome = report["outcome"]
    if raised:
        print(f"  today: {raised['type']}: {raised['message']}")
    elif isinstance(outcome, list):  # one record per case, e.g. each durability spelling
        from labkit.views.text import format_records

        print("  today: no exception; outcome:\n")
        print(textwrap.indent(format_records(outcome), "    ") + "\n")
    else:
        print(f"  today: no exception; outcome {outcome}")
    for warning in report["warnings"]:
        print(f"  warning: {warning}")
    print(f"  study 004 saw: {PITFALLS[args.name].study_said}")
