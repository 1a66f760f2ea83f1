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
    print(say("cli.said.in_memory_before", n=r["checkpoints_before_kill"]))
    print(say("cli.said.first_exit", code=r["first_exit"]))
    print(say("cli.said.in_memory_after", n=r["checkpoints_after_restart"]))
    print(say("cli.said.invoke_none", what=r["recovery_error"] or say("cli.said.resumed")))
    print(say("cli.said.run_folder", folder=r["run_dir"]))
    if r["failure"]:
        print(say("cli.said.failed", failure=r["failure"]))


def cmd_library(args: argparse.Namespace) -> None:
    from labkit.studies.durability.library import durability_in_library

    facts = durability_in_library()
    if args.json:
        print_json(facts)
        return
    for what in ("literal_at", "default_at"):
        place = facts[what]
        print(say("cli.said.line_at", file=place["file"], line=place["line"], text=place["text"]))
    print(say("cli.said.default", default=facts["default"], version=facts["version"]))
    print(say("cli.said.definitions_in", where=facts["definitions_in"]))
    for text in facts["definitions"].values():
        print(f"  {text}")


def cmd_pitfall(args: argparse.Namespace) -> None:
    report = run_pitfall(args.name)
    print(say(f"durability.pitfall.{args.name}.title"))
    raised = report["raised"]
    outcome = report["outcome"]
    if raised:
        print(
            "  " + say("durability.pitfall.today", today=f"{raised['type']}: {raised['message']}")
        )
    elif isinstance(outcome, list):  # one record per case, e.g. each durability spelling
        from labkit.views.text import format_records

        print(
            "  "
            + say("durability.pitfall.today", today=say("durability.pitfall.no_exception"))
            + "\n"
        )
        print(textwrap.indent(format_records(outcome), "    ") + "\n")
    else:
        no_exception = say("cli.said.no_exception", outcome=outcome)
        print("  " + say("durability.pitfall.today", today=no_exception))
    for warning in report["warnings"]:
        print("  " + say("durability.pitfall.warning", warning=warning))
    said = say(f"durability.pitfall.{args.name}.said")
    print("  " + say("durability.pitfall.study_saw", said=said))
