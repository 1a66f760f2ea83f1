"""Lesson 4 on the command line: SIGKILL inside a LangGraph node, and study 004's pitfalls."""

from __future__ import annotations

import argparse
import textwrap

from labkit.cli.common import print_json, progress_bar, whole_number
from labkit.studies.durability.experiment import MAX_SLOW_MS, MAX_TRIALS
from labkit.studies.durability.pitfalls import PITFALLS, run_pitfall

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    lg = commands.add_parser("durability", help="study 004: SIGKILL inside a LangGraph node")
    lg.add_argument("--graph", default="linear", help="linear or parallel")
    lg.add_argument("--mode", default="sync", help="LangGraph durability: sync, async or exit")
    lg.add_argument(
        "--slow-ms",
        type=whole_number("slow-ms", 0, MAX_SLOW_MS),
        default=0,
        help=f"delay every checkpoint put() by this many ms, 0 to {MAX_SLOW_MS} (default 0)",
    )
    lg.add_argument(
        "--kill-moment",
        default="target_starts",
        help="when the SIGKILL lands: target_starts (the default: inside the target node as it"
        " starts, c on the linear graph, p3 on the parallel), others_done (parallel: inside p3"
        " once p1 and p2 have finished) or checkpoint_after_b (linear: as the checkpoint after"
        " b is saved)",
    )
    lg.add_argument(
        "--trials",
        type=whole_number("trials", 1, MAX_TRIALS),
        default=4,
        help=f"kill-and-recover trials, 1 to {MAX_TRIALS} (default 4)",
    )
    lg.add_argument("--json", action="store_true", help="print a JSON list, one object a trial")
    lg.set_defaults(handler=cmd_durability)

    memory = commands.add_parser(
        "in-memory", help="an InMemorySaver killed inside c, then a restart: what it keeps"
    )
    memory.add_argument("--json", action="store_true", help="print one JSON object")
    memory.set_defaults(handler=cmd_in_memory)

    library = commands.add_parser(
        "library", help="durability as the installed LangGraph defines it, and its default"
    )
    library.add_argument("--json", action="store_true", help="print one JSON object")
    library.set_defaults(handler=cmd_library)

    gallery = commands.add_parser("pitfall", help="reproduce one of study 004's errors live")
    gallery.add_argument("name", help="one of: " + ", ".join(PITFALLS))
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
