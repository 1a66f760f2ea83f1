"""What every group of `labkit` commands shares: the parser, a command's options declared once
(`Command`: their help said from the catalogue by their names), number arguments, a bad value
refused by its code (`bad_value`), progress bars, text fitted to 100 columns or JSON (`echo`,
`show`), and the step loop a projector drives with one key at a time."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable
from typing import TextIO

from labkit.bench.errors import LabError, check_int, refusal
from labkit.language import say
from labkit.language.refusals import error_line
from labkit.views.terminal import fit

__all__ = [
    "Command",
    "bad_value",
    "echo",
    "step_keys",
    "Parser",
    "leave_out",
    "out_option",
    "print_json",
    "progress_bar",
    "seconds",
    "show",
    "step_through",
    "whole_number",
]


def bad_value(code: str, **fields: object) -> argparse.ArgumentTypeError:
    """An option's value refused (argparse's type), in one line: argparse puts "argument
    --lock:" before the catalogue's cli.error.<code>, said in the reader's language."""
    return argparse.ArgumentTypeError(error_line(refusal(code, **fields)))


def reaped(how: str, session: object) -> str:
    """The line that ends a step session cut short (`how`: "quit" or "interrupted"): what was
    reaped, where its files are."""
    return say(f"cli.step.{how}", killed=victim(session), run_dir=session.run_dir)


def step_keys(session: object) -> str:
    """The keys of step mode, naming the process a kill reaches."""
    return say("cli.step.keys", who=victim(session))


def victim(session: object) -> str:
    """The process a kill reaches now, in the reader's words (`session.killed` is its code:
    "worker", "caller", "relay", "w1")."""
    return say(f"cli.who.{session.killed}")


REQUIRED = "the following arguments are required: "  # argparse's words for what is missing


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line, like every other bad input here; a missing
    argument that has choices (`Command.choice`, the command itself) names them, where
    argparse names only it."""

    def error(self, message: str) -> None:
        if message.startswith(REQUIRED):
            missing = message.removeprefix(REQUIRED).split(", ")
            for action in self._actions:
                named = getattr(action, "named_choices", None)
                if named and action.dest in missing:
                    raise refusal("name_one", what=named[0], choices=", ".join(named[1]))
        raise LabError(message, "usage", line=message)

    def print_help(self, file: TextIO | None = None) -> None:
        """argparse ignores a help it fails to write; here `--help > /dev/full` is an error
        (status 2), not a quiet success."""
        out = file or sys.stdout
        if out is not None:
            out.write(self.format_help())
            out.flush()


def whole_number(what: str, low: int, high: int) -> Callable[[str], int]:
    """An argparse type: the text as a whole number from `low` to `high`, or one clear line."""

    def parse(text: str) -> int:
        # Plain ASCII digits only: int() would also take "1_0", " 2" and "٣" (an Arabic 3).
        # Anything else ("2.5", "many") goes to check_int as text, which refuses it.
        value: object = int(text) if re.fullmatch(r"-?[0-9]+", text) else text
        try:
            return check_int(what, value, low, high)
        except LabError as error:
            raise argparse.ArgumentTypeError(error_line(error)) from None

    return parse


def seconds(text: str) -> float:
    """An argparse type: a number of seconds (its range is the spec's to check)."""
    try:
        return float(text)
    except ValueError:
        raise bad_value("seconds", value=text) from None


def leave_out(why: str, given: dict[str, bool], **fields: object) -> None:
    """Refuse in one line the options left unread, among `given` (each option: did the reader
    give it?): argparse would let them pass, and the reader think they counted. `why` is the
    catalogue's code for the reason ("cli.why.<why>", with `fields`)."""
    unread = [option for option, was_given in given.items() if was_given]
    if unread:
        reason = say(f"cli.why.{why}", **fields)
        raise LabError(
            say("cli.error.leave_out", why=reason, options=", ".join(unread)),
            "leave_out",
            why=reason,
            options=", ".join(unread),
        )


def out_option(parser: argparse.ArgumentParser, what: str = "run") -> None:
    """--out: the folder the run writes in, which must not exist yet (`what`: "run", "sweep"
    or "exploration", the catalogue's word for what writes there)."""
    parser.add_argument("--out", help=say(f"cli.out.{what}"))


class Command:
    """One command and its options, each option's help said from the catalogue by the key
    convention "cli.<group>.<command>.<option>" (the flag's name, dashes as underscores), so a
    group names each option once and says only what differs: its choices, range or default."""

    def __init__(
        self,
        commands: argparse._SubParsersAction,
        group: str,
        name: str,
        handler: Callable,
        **defaults: object,
    ) -> None:
        self.key = f"cli.{group}.{name.replace('-', '_')}"
        self.parser = commands.add_parser(name, help=say(f"{self.key}.help"))
        self.parser.set_defaults(handler=handler, **defaults)

    def add(
        self,
        *flags: str,
        fields: dict[str, object] | None = None,
        among: argparse._ActionsContainer | None = None,
        **options: object,
    ) -> Command:
        """An argument (`among` a group of the parser's, if given), its help the catalogue's
        words for it with `fields` filled in."""
        name = flags[0].lstrip("-").replace("-", "_")
        helped = say(f"{self.key}.{name}", **(fields or {}))
        (among or self.parser).add_argument(*flags, help=helped, **options)
        return self

    def choice(
        self, flag: str, choices: Iterable[str], what: str | None = None, **options: object
    ) -> Command:
        """An argument whose help lists its `choices` (the study checks the value). A required
        one names `what` each choice is ("write order"): left out, the parser's line lists them."""
        choices = list(choices)
        self.add(flag, fields={"choices": ", ".join(choices)}, **options)
        if what:
            self.parser._actions[-1].named_choices = (what, choices)
        return self

    def number(self, flag: str, low: int, high: int, default: int, **fields: object) -> Command:
        """A whole number from `low` to `high`, or one line that says so."""
        check = whole_number(flag.lstrip("-"), low, high)
        return self.add(flag, type=check, default=default, fields=fields)

    def switch(self, flag: str, **options: object) -> Command:
        """An option that is on when given."""
        return self.add(flag, action="store_true", **options)

    def out(self, what: str = "run") -> Command:
        out_option(self.parser, what)
        return self

    def json(self) -> Command:
        return self.switch("--json")


def echo(text: str = "") -> None:
    """Text for the terminal, each line in 100 columns (a longer one wraps at its words)."""
    print(fit(text))


def print_json(value: object) -> None:
    """One run as one line of JSON; a list of runs one item a line, for `jq` and diffs."""
    print(json.dumps(value, indent=1 if isinstance(value, list) else None))


def show(result: object, format_text: Callable[[object], str], as_json: bool) -> None:
    """What a command ran, as the view's text or, with --json, as JSON (`as_data`)."""
    if as_json:
        print_json(as_data(result))
    else:
        echo(format_text(result))


def as_data(result: object) -> object:
    """A run as JSON's data: its `summary()` (each one's, for a sweep's list), or the result
    itself where it is plain data already (a dict)."""
    if isinstance(result, list):
        return [as_data(r) for r in result]
    return result.summary() if hasattr(result, "summary") else result


def progress_bar(desc: str, unit: str) -> tuple[object, Callable[[int, int, object], None]]:
    """A terminal progress bar (on stderr) and the `progress(done, total, item)` that moves it;
    `desc` and `unit` are codes, said from the catalogue ("cli.progress.<desc>", "cli.unit.")."""
    from tqdm import tqdm

    desc, unit = say(f"cli.progress.{desc}"), say(f"cli.unit.{unit}")
    bar = tqdm(desc=desc, unit=unit, file=sys.stderr, disable=None)

    def advance(done: int, total: int, _item: object) -> None:
        bar.total = total
        bar.update(done - bar.n)

    return bar, advance


def step_through(
    session: object,
    answer: Callable[[str], str],
    kind: str = "worker",
    said: Callable[[object], object] = str,
) -> bool:
    """Show the keys, then the files at each stop of a step session (any study's), and act on
    one key; False if the reader quit (the worker killed and reaped), True when recovery is
    next. `kind` says
    what follows a kill or the end: "worker" (a fresh process recovers) or "race" (a race's
    step mode has no fresh process, the rest of its schedule runs); `said` says where it is
    paused (a race's move is a code and numbers). A Ctrl-C reaps as q does, and says the
    folder."""
    from labkit.views.text import format_snapshot

    then = say(f"cli.step.then_{kind}")
    echo(say("cli.step.keys_line", keys=step_keys(session)))
    try:
        while not session.finished:
            echo(say("cli.step.paused", point=said(session.paused_at)))
            echo(format_snapshot(session.state()))
            choice = answer(say("cli.step.prompt")).strip().lower()
            if choice in ("", "c"):
                if session.proceed() is None:
                    echo(say(f"cli.step.ended_{kind}", then=then))
            elif choice == "k":
                killed = victim(session)  # named before: the kill ends its stage
                echo(say("cli.step.killed", killed=killed, point=session.kill(), then=then))
            elif choice == "q":
                session.close()
                echo(reaped("quit", session))
                return False
            else:
                echo(say("cli.step.not_a_key", choice=choice, keys=step_keys(session)))
    except KeyboardInterrupt:
        session.close()
        echo("\n" + reaped("interrupted", session))
        raise
    return True
