"""`labkit` on the command line: the same runs as the notebooks, for instructors and scripts.

Each study's commands live in a module of their own here (`register` adds them to the parser);
this module only parses and turns every way a run can fail into one line and an exit status.
Bad input ends with exit status 2 and one line on stderr that names the valid choices.
"""

from __future__ import annotations

import sys


def is_ctrl_c(error: BaseException) -> bool:
    """A KeyboardInterrupt, or an error it caused: one raised in a class body's `__set_name__`
    (as an import builds ipaddress's cached `hostmask`, say) reaches us as a RuntimeError."""
    cause = error.__cause__ or error.__context__
    return isinstance(error, KeyboardInterrupt) or (cause is not None and is_ctrl_c(cause))


try:  # a Ctrl-C while Python loads labkit (its first tenth of a second) is one line too
    import errno
    import importlib.metadata
    import os
    from collections.abc import Sequence

    from labkit.bench.errors import LabError, RunFailed, refusal
    from labkit.bench.portable import check_as_on_macos
    from labkit.bench.server import ServerError
    from labkit.cli import (
        commit_window,
        durability,
        explore,
        housekeeping,
        interrupt_resume,
        leases,
        outbox,
        postgres,
        retries,
        unknown_outcome,
    )
    from labkit.cli.common import Parser
    from labkit.language import language, say
    from labkit.language.refusals import error_line
except (KeyboardInterrupt, RuntimeError) as error:
    if not is_ctrl_c(error):
        raise
    print("labkit: interrupted before it started; nothing ran", file=sys.stderr)
    raise SystemExit(130) from None

__all__ = ["build_parser", "main"]

# The command groups in the order `labkit --help` lists them: the lessons', then housekeeping.
GROUPS = (
    commit_window,
    durability,
    interrupt_resume,
    unknown_outcome,
    outbox,
    leases,
    retries,
    postgres,
    explore,
    housekeeping,
)

# How a write to stdout fails when it goes to a full disk, /dev/full or a device in trouble.
OUTPUT_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)


def build_parser() -> Parser:
    parser = Parser(prog="labkit", description=say("cli.main.description"))
    parser.add_argument("--version", action="version", version=f"labkit {installed_version()}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for group in GROUPS:
        group.register(commands)
    commands.named_choices = ("command", list(commands.choices))  # left out: Parser.error
    return parser


def installed_version() -> str:
    """labkit's version as installed (a CI log says which one ran), or where it runs from."""
    try:
        return importlib.metadata.version("labkit")
    except importlib.metadata.PackageNotFoundError:  # run from a folder on the path
        return f"(not installed, from {os.path.dirname(os.path.dirname(__file__))})"


def main(argv: Sequence[str] | None = None) -> int:
    try:  # LABKIT_LANGUAGE names a language there is a catalogue for: the help is said in it
        language()
    except LabError as error:  # no language to say it in: English
        print(f"labkit: error: {error}", file=sys.stderr)
        return 2
    try:
        args = build_parser().parse_args(argv)
        check_as_on_macos()  # and LABKIT_AS_ON_MACOS is 1 or 0
        if getattr(args, "step", False):  # step mode reads keys: check before a worker starts
            if sys.stdin is None:
                raise refusal("stdin_closed")
            if sys.stdout is None:
                raise refusal("stdout_closed")
        status = args.handler(args) or 0
        if sys.stdout is not None:
            sys.stdout.flush()  # a reader that has gone shows here, not at exit as a traceback
        return status
    except BrokenPipeError:  # `labkit orders | head -1`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush
        return 141  # 128 + SIGPIPE: what a shell reports for `cat` stopped the same way
    except (LabError, RunFailed) as error:  # bad input, or a disk that filled during a run
        line = error_line(error)
        print(say("cli.error.line", error=line), file=sys.stderr)
        return 2
    except ServerError as error:
        print(say("cli.error.server_failed", error=error), file=sys.stderr)
        return 1
    except OSError as error:  # labkit names the files it fails on: this is stdout (> /dev/full)
        if error.filename is not None or error.errno not in OUTPUT_ERRORS:
            raise
        if sys.stdout is not None:  # what is left in its buffer could not be written either
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        print(say("cli.error.cannot_write", reason=error.strerror), file=sys.stderr)
        return 2
    except EOFError:
        print(say("cli.error.input_ended"), file=sys.stderr)
        return 1
    except (KeyboardInterrupt, RuntimeError) as error:  # after ServerError, a RuntimeError too
        if not is_ctrl_c(error):
            raise
        print(say("cli.error.interrupted"), file=sys.stderr)
        return 130
