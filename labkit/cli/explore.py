"""Lesson 9 on the command line: the crash explorer, pointed at your own step or graph.

    labkit explore my_step:step                      # a step(control, effect, gate), lesson 2's
    labkit explore my_graph:graph --kind graph       # a LangGraph graph, lessons 3 and 4's
    labkit explore my_graph:graph --kind graph --checker my_checks:one_ticket --json
    labkit explore my_flow:run --kind callable       # run(checkpointer, resume): yours to recover

The module is read from the current folder by its file alone (that folder joins no import
path), and only in the explorer's workers. Status 0: green; 1: not green, or your code failed in
the run without a crash (one line); 2: bad input; a Ctrl-C prints what was explored (130).
"""

from __future__ import annotations

import argparse
import json
import sys

from labkit.cli.common import bad_value, out_option, print_json, progress_bar, seconds
from labkit.language import say

__all__ = ["register"]

INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C


def register(commands: argparse._SubParsersAction) -> None:
    ex = commands.add_parser("explore", help=say("cli.explore.explore.help"))
    ex.add_argument("target", help=say("cli.explore.explore.target"))
    ex.add_argument(
        "--kind",
        default="step",
        help=say("cli.explore.explore.kind"),
    )
    ex.add_argument(
        "--checker",
        help=say("cli.explore.explore.checker"),
    )
    ex.add_argument("--durability", default="sync", help=say("cli.explore.explore.durability"))
    ex.add_argument(
        "--one-file",
        action="store_true",
        help=say("cli.explore.explore.one_file"),
    )
    ex.add_argument("--kill-mode", default="sigkill", help=say("cli.explore.explore.kill_mode"))
    ex.add_argument(
        "--restart-at",
        metavar="RESTARTS",
        help=say("cli.explore.explore.restart_at"),
    )
    ex.add_argument(
        "--resume",
        metavar="JSON",
        type=json_value,
        action="append",
        help=say("cli.explore.explore.resume"),
    )
    ex.add_argument(
        "--resume-by",
        metavar="MODULE:FUNCTION",
        help=say("cli.explore.explore.resume_by"),
    )
    ex.add_argument(
        "--config",
        metavar="JSON",
        type=json_value,
        help=say("cli.explore.explore.config"),
    )
    ex.add_argument(
        "--postgres",
        metavar="URL",
        help=say("cli.explore.explore.postgres"),
    )
    ex.add_argument(
        "--ignore-file",
        metavar="PATTERN",
        action="append",
        default=[],
        help=say("cli.explore.explore.ignore_file"),
    )
    ex.add_argument(
        "--harmless-program",
        metavar="NAME",
        action="append",
        default=[],
        help=say("cli.explore.explore.harmless_program"),
    )
    ex.add_argument(
        "--with-file",
        metavar="PATH",
        action="append",
        default=[],
        help=say("cli.explore.explore.with_file"),
    )
    ex.add_argument(
        "--timeout",
        metavar="S",
        type=seconds,
        default=30.0,
        help=say("cli.explore.explore.timeout"),
    )
    ex.add_argument(
        "--path",
        metavar="DIR",
        help=say("cli.explore.explore.path"),
    )
    out_option(ex, "exploration")
    ex.add_argument("--json", action="store_true", help=say("cli.explore.explore.json"))
    ex.set_defaults(handler=cmd_explore)


def json_value(text: str) -> object:
    """--resume's JSON, or the one line that says what JSON it takes (status 2)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise bad_value("not_json", value=text) from None


def start_server_meanwhile(kind: str) -> None:
    """Start the exploration's server (seconds: it imports LangGraph) in a thread while this
    one checks the target and prunes the runs home (the oldest runs removed: most of a second
    once it is full). The server dies with the thread that started it: the thread waits for
    as long as the CLI runs. If the start fails, the exploration's own call says why."""
    import threading

    from labkit.bench import server
    from labkit.bench.started import READY
    from labkit.studies.explorer.replay import SERVERS

    def start() -> None:
        try:
            server.call_on(SERVERS.get(kind, "trial"), READY)
        except Exception:  # noqa: BLE001 - said by the exploration's call, in the main thread
            return
        threading.Event().wait()

    threading.Thread(target=start, name="labkit-server-start", daemon=True).start()


def cmd_explore(args: argparse.Namespace) -> int:
    from labkit.bench.errors import CodeFailed
    from labkit.language.refusals import error_line
    from labkit.studies.explorer.replay import explore

    if args.out is None:  # the runs home is pruned first: start the server meanwhile
        start_server_meanwhile(args.kind)
    bar, advance = progress_bar("crash_states", "state")
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
            ignore_files=args.ignore_file,
            with_files=args.with_file,
            harmless_programs=args.harmless_program,
        )
    except CodeFailed as error:  # the reader's code failed, not their input: as a red matrix
        bar.close()
        print(say("cli.error.line", error=error_line(error)), file=sys.stderr)
        return 1
    finally:
        bar.close()
    if args.json:
        print_json(found.to_json())
    else:
        from labkit.views.explorer_words import matrix_text

        print(matrix_text(found))
    if found.stopped_by and found.stopped_by["code"] == "interrupted":
        return INTERRUPTED
    return 0 if found.green else 1
