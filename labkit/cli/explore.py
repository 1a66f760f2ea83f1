"""Lesson 9 on the command line: the crash explorer, pointed at your own step or graph.

    labkit explore my_step:step                      # a step(control, effect, gate), lesson 2's
    labkit explore my_graph:graph --kind graph       # a LangGraph graph, lessons 3 and 4's
    labkit explore my_graph:graph --kind graph --checker my_checks:one_ticket --json
    labkit explore my_flow:run --kind callable       # run(checkpointer, resume): yours to recover

The module is read from the current folder by its file alone (that folder joins no import
path), and only in the explorer's workers. A Ctrl-C prints what was explored (status 130).
"""

from __future__ import annotations

import argparse
import json

from labkit.cli.common import out_option, print_json, progress_bar

__all__ = ["register"]

INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C


def register(commands: argparse._SubParsersAction) -> None:
    ex = commands.add_parser(
        "explore", help="lesson 9: crash your own step or graph at every crash point, check each"
    )
    ex.add_argument("target", help="module:callable (a module of this folder, or of labkit)")
    ex.add_argument(
        "--kind",
        default="step",
        help="step (lesson 2's step(control, effect, gate)), graph (LangGraph) or callable "
        "(run(checkpointer, resume), your own recovery)",
    )
    ex.add_argument(
        "--checker",
        help="module:function judging each state (default: every "
        "effect of the run without a crash exactly once, the run finished)",
    )
    ex.add_argument("--durability", default="sync", help="a graph's: sync, async or exit")
    ex.add_argument(
        "--one-file",
        action="store_true",
        help="a step's control and effect in one file (lesson 2's atomic order)",
    )
    ex.add_argument("--kill-mode", default="sigkill", help="sigkill or exit (os._exit(91))")
    ex.add_argument(
        "--restart-at",
        metavar="RESTARTS",
        help="when each crash state is recovered, with commas between: now, day, month, year, "
        "hash (a new interpreter, another hash seed); default every one for a step, all but "
        "hash for a graph or a callable",
    )
    ex.add_argument(
        "--resume",
        metavar="JSON",
        type=json_value,
        action="append",
        help="a graph's answer to every interrupt(), as JSON "
        """(e.g. '{"action": "approve"}'; default: true); given more than once, the answers """
        "in order: the n-th interrupt the run meets gets the n-th",
    )
    ex.add_argument(
        "--resume-by",
        metavar="MODULE:FUNCTION",
        help="a function of the interrupt's payload that returns the answer",
    )
    ex.add_argument(
        "--config",
        metavar="JSON",
        type=json_value,
        help="""a graph's config for every invoke, as JSON (e.g. '{"configurable": """
        """{"passenger_id": "3442 587242"}}')""",
    )
    ex.add_argument(
        "--postgres",
        metavar="URL",
        help="a Postgres server for your nodes' rows: 'lab' (labkit's own) or a URL; every run "
        "gets a schema of its own there (your code finds the server in $DATABASE_URL, the "
        "schema on its search path), whose commits are crash points",
    )
    ex.add_argument(
        "--timeout",
        metavar="S",
        type=seconds,
        default=30.0,
        help="seconds each worker may take (default 30)",
    )
    ex.add_argument(
        "--path",
        metavar="DIR",
        help="put DIR first on the workers' import path, for a module that imports its "
        "siblings (default: none, so no file beside yours is imported by its name)",
    )
    out_option(ex, "exploration")
    ex.add_argument("--json", action="store_true", help="print one JSON object")
    ex.set_defaults(handler=cmd_explore)


def json_value(text: str) -> object:
    """--resume's JSON, or the one line that says what JSON it takes (status 2)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise argparse.ArgumentTypeError(
            f"""not JSON: {text!r}; give a JSON value, e.g. '{{"action": "approve"}}', true, """
            "'\"yes\"' or '[1, 2]'"
        ) from None


def seconds(text: str) -> float:
    """--timeout's number, or the one line that says what it takes (status 2)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}; e.g. 60") from None


def cmd_explore(args: argparse.Namespace) -> int:
    from labkit.studies.explorer.replay import explore

    bar, advance = progress_bar("crash states", "state")
    try:
        found = explore(
            args.target,
            args.kind,
            args.checker,
            args.durability,
            args.one_file,
            args.kill_mode,
            args.out,
            progress=None if args.json else advance,
            restart_at=args.restart_at,
            resume=args.resume[0] if args.resume and len(args.resume) == 1 else None,
            resume_by=args.resume_by,
            resumes=args.resume if args.resume and len(args.resume) > 1 else None,
            config=args.config,
            timeout=args.timeout,
            path=args.path,
            postgres=args.postgres,
        )
    finally:
        bar.close()
    if args.json:
        print_json(found.to_json())
    else:
        from labkit.studies.explorer.report import matrix_text

        print(matrix_text(found))
    if found.stopped_by and found.stopped_by["code"] == "interrupted":
        return INTERRUPTED
    return 0 if found.green else 1
