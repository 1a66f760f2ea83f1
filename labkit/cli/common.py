"""What every group of `labkit` commands shares: the parser, number arguments, progress bars,
JSON output and the step loop a projector drives with one key at a time."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from typing import TextIO

from labkit.bench.errors import LabError, check_int

__all__ = [
    "step_keys",
    "Parser",
    "leave_out",
    "out_option",
    "print_json",
    "progress_bar",
    "step_through",
    "whole_number",
]


def reaped(how: str, session: object) -> str:
    """The line that ends a step session cut short: what was reaped, where its files are."""
    return f"{how}: {session.killed} was killed and reaped. Run folder: {session.run_dir}"


def step_keys(session: object) -> str:
    """The keys of step mode, naming the process a kill reaches (`session.killed`: "w1")."""
    who = session.killed
    return f"Enter or c: continue · k: kill -9 {who} here · q: quit (kills and reaps {who})"


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line, like every other bad input here."""

    def error(self, message: str) -> None:
        raise LabError(message)

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
            raise argparse.ArgumentTypeError(str(error)) from None

    return parse


def leave_out(why: str, given: dict[str, bool]) -> None:
    """Refuse in one line the options `why` leaves unread, among `given` (each option: did the
    reader give it?): argparse would let them pass, and the reader think they counted."""
    unread = [option for option, was_given in given.items() if was_given]
    if unread:
        raise LabError(f"{why}; leave out {', '.join(unread)}")


def out_option(parser: argparse.ArgumentParser, what: str = "run") -> None:
    """--out: the folder the run writes in, which must not exist yet."""
    parser.add_argument(
        "--out", help=f"a new folder for the {what} (default: a new folder in the runs home)"
    )


def print_json(value: object) -> None:
    """One run as one line of JSON; a list of runs one item a line, for `jq` and diffs."""
    print(json.dumps(value, indent=1 if isinstance(value, list) else None))


def progress_bar(desc: str, unit: str) -> tuple[object, Callable[[int, int, object], None]]:
    """A terminal progress bar (on stderr) and the `progress(done, total, item)` that moves it."""
    from tqdm import tqdm

    bar = tqdm(desc=desc, unit=unit, file=sys.stderr, disable=None)

    def advance(done: int, total: int, _item: object) -> None:
        bar.total = total
        bar.update(done - bar.n)

    return bar, advance


def step_through(
    session: object,
    answer: Callable[[str], str],
    then: str = "recovering in a fresh process",
    ended: str = "The worker finished its step",
) -> bool:
    """Show the files at each stop of a step session (any study's) and act on one key; False
    if the reader quit (the worker killed and reaped), True when recovery is next. `then` says
    what follows a kill or the end, `ended` what the end is: a race's step mode has no fresh
    process, the rest of its schedule runs. A Ctrl-C reaps as q does, and says the folder."""
    from labkit.views.text import format_snapshot

    try:
        while not session.finished:
            print(f"\n=== paused at {session.paused_at!r}\nThe files hold now:")
            print(format_snapshot(session.state()))
            choice = answer("Enter/c, k or q > ").strip().lower()
            if choice in ("", "c"):
                if session.proceed() is None:
                    print(f"{ended}; {then} ...")
            elif choice == "k":
                killed = session.killed  # named before: the kill ends its stage
                print(f"SIGKILL {killed} at {session.kill()!r}; {then} ...")
            elif choice == "q":
                session.close()
                print(reaped("Quit", session))
                return False
            else:
                print(f"{choice!r} is not one of the keys. {step_keys(session)}")
    except KeyboardInterrupt:
        session.close()
        print("\n" + reaped("Interrupted", session))
        raise
    return True
