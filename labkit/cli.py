"""`labkit` on the command line: the same runs as the notebooks, for instructors and scripts.

Bad input ends with exit status 2 and one line on stderr that names the valid choices.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

from labkit.errors import LabError
from labkit.orders import NO_KILL, ORDERS
from labkit.runs import run
from labkit.snapshot import snapshot_folder
from labkit.spec import KILL_MODES
from labkit.sweeps import sweep

__all__ = ["main"]


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line, like every other bad input here."""

    def error(self, message: str) -> None:
        raise LabError(message)


def build_parser() -> Parser:
    parser = Parser(prog="labkit", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    commands.add_parser("orders", help="list the write orders and their kill points")

    one = commands.add_parser("run", help="crash one worker at a kill point, then recover")
    one.add_argument("order", help=f"one of: {', '.join(ORDERS)}")
    one.add_argument("--kill-at", default=NO_KILL, help="a kill point of the order, or none")
    one.add_argument("--kill-mode", default="exit", help=f"one of: {', '.join(KILL_MODES)}")
    one.add_argument("--out", help="a new folder for the run (default: a new temporary folder)")
    one.add_argument("--json", action="store_true", help="print one JSON object")

    many = commands.add_parser("sweep", help="every order at every kill point")
    many.add_argument("--kill-mode", default="exit", help=f"one of: {', '.join(KILL_MODES)}, both")
    many.add_argument("--out", help="a new folder for the sweep (default: a new temporary folder)")
    many.add_argument("--json", action="store_true", help="print a JSON list")

    step = commands.add_parser("step", help="pause at each kill point: Enter goes on, k kills")
    step.add_argument("order", help=f"one of: {', '.join(ORDERS)}")
    step.add_argument("--out", help="a new folder for the run (default: a new temporary folder)")

    show = commands.add_parser("show", help="print every table of a run folder's SQLite files")
    show.add_argument("run_dir")
    return parser


def cmd_orders(args: argparse.Namespace) -> None:
    from labkit.views.text import format_grid

    rows = [
        (o.name, " ".join(o.files), " ".join(o.kill_points), o.summary) for o in ORDERS.values()
    ]
    print(format_grid(("order", "files", "kill points", "what it does"), rows))


def cmd_run(args: argparse.Namespace) -> None:
    from labkit.views.text import format_run

    result = run(args.order, args.kill_at, args.kill_mode, args.out)
    print(json.dumps(result.summary()) if args.json else format_run(result))


def cmd_sweep(args: argparse.Namespace) -> None:
    from tqdm import tqdm

    from labkit.views.text import format_sweep

    modes = KILL_MODES if args.kill_mode == "both" else (args.kill_mode,)
    with tqdm(desc="sweep", unit="run", file=sys.stderr, disable=None) as bar:

        def advance(done: int, total: int, _result: object) -> None:
            bar.total = total
            bar.update(1)

        results = sweep(modes, args.out, progress=advance)
    if args.json:
        print(json.dumps([r.summary() for r in results], indent=1))
    else:
        print(format_sweep(results))


def cmd_show(args: argparse.Namespace) -> None:
    from labkit.views.text import format_snapshot

    print(format_snapshot(snapshot_folder(args.run_dir)))


def cmd_step(args: argparse.Namespace, answer: Callable[[str], str] = input) -> None:
    """For a projector: show the files at each stop; Enter continues, k kills with SIGKILL."""
    from labkit.stepping import StepSession
    from labkit.views.text import format_run, format_snapshot

    with StepSession(args.order, args.out) as session:
        while not session.finished:
            print(f"\n=== paused at {session.paused_at!r}; the files hold now:")
            print(format_snapshot(session.state()))
            choice = answer("[Enter] continue, [k] kill -9 here > ").strip().lower()
            if choice == "k":
                print(f"SIGKILL at {session.kill()!r}; recovering in a fresh process ...")
            else:
                session.proceed()
        print("\n" + format_run(session.recover()))


COMMANDS = {
    "orders": cmd_orders,
    "run": cmd_run,
    "sweep": cmd_sweep,
    "step": cmd_step,
    "show": cmd_show,
}


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        COMMANDS[args.command](args)
    except LabError as error:
        print(f"labkit: error: {error}", file=sys.stderr)
        return 2
    except EOFError:
        print("labkit: input ended; the worker was killed and reaped", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("labkit: interrupted; every worker was killed and reaped", file=sys.stderr)
        return 130
    return 0
