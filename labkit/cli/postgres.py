"""Lesson 7 on the command line: the commit window, the race and a crash on a real Postgres,
and study 004 on three checkpointers side by side.

labkit starts its own Postgres (in the runs home, gone when the command ends) unless
--postgres-url or $LABKIT_POSTGRES_URL names a server of yours; each run then makes its own
schema there, and `labkit clean --postgres-url URL` (or with the variable set) drops those
of runs that are over.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from labkit.bench.errors import LabError, check_distinct
from labkit.bench.postgres import ENV_URL
from labkit.cli.common import Command, bad_value, echo, leave_out, print_json, progress_bar
from labkit.language import say
from labkit.language.refusals import error_line
from labkit.studies.durability.experiment import (
    CHECKPOINTER_SETUPS,
    DURABILITY_MODES,
    GRAPHS,
    MAX_PUT_RUNS,
    MAX_SLOW_MS,
    MAX_TRIALS,
)
from labkit.studies.postgres.spec import CRASH_POINTS, LOCKS, WINDOW_ORDERS

__all__ = ["register"]

ALL = "all"
DEFAULT_ORDER = "effect_first"


def url_option(command: Command) -> Command:
    """--postgres-url, said alike for every command here (one key, not one a command)."""
    command.parser.add_argument(
        "--postgres-url",
        help=say("cli.postgres.common.postgres_url", env_url=ENV_URL),
    )
    return command


def listed(what: str, choices: object) -> Callable[[str], tuple[str, ...]]:
    """An argparse type: a comma-separated list, each item one of `choices` (or 'all'), none
    twice."""

    def parse(text: str) -> tuple[str, ...]:
        picked = tuple(choices) if text == ALL else tuple(t.strip() for t in text.split(","))
        wrong = [p for p in picked if p not in choices]
        if wrong:
            fields = {"what": what, "value": wrong[0], "choices": ", ".join(choices), "all": ALL}
            raise bad_value("listed", **fields)
        try:
            return check_distinct(what, picked)
        except LabError as error:
            raise argparse.ArgumentTypeError(error_line(error)) from None

    return parse


def register(commands: argparse._SubParsersAction) -> None:
    window = Command(commands, "postgres", "pg-window", cmd_window)
    listing = {"choices": ", ".join(WINDOW_ORDERS), "default_order": DEFAULT_ORDER}
    window.add("order", nargs="?", fields=listing).add("--kill-at", default=None)
    url_option(window.switch("--sweep")).json()

    race = Command(commands, "postgres", "pg-race", cmd_race)
    race.choice("--lock", LOCKS, type=listed("lock", LOCKS), default=tuple(LOCKS))
    url_option(race).json()

    crash = Command(commands, "postgres", "pg-crash", cmd_crash)
    every = {"choices": ", ".join(CRASH_POINTS), "all": ALL}
    points = listed("crash point", CRASH_POINTS)
    crash.add("--point", type=points, default=tuple(CRASH_POINTS), fields=every).json()

    matrix = Command(commands, "postgres", "pg-durability", cmd_durability)
    matrix.parser.add_argument("--graph", type=listed("graph", GRAPHS), default=GRAPHS)
    modes = listed("durability mode", DURABILITY_MODES)
    matrix.choice("--mode", DURABILITY_MODES, type=modes, default=("sync", "async"))
    setups = listed("checkpointer", CHECKPOINTER_SETUPS)
    every = {"choices": ", ".join(CHECKPOINTER_SETUPS), "all": ALL}
    matrix.add("--checkpointer", type=setups, default=tuple(CHECKPOINTER_SETUPS), fields=every)
    url_option(matrix.number("--trials", 1, MAX_TRIALS, 2, max_trials=MAX_TRIALS)).json()

    rerun = Command(commands, "postgres", "pg-8039", cmd_8039)
    rerun.number("--writes-delay-ms", 1, MAX_SLOW_MS, 1000, max_slow_ms=MAX_SLOW_MS)
    url_option(rerun.number("--trials", 1, MAX_TRIALS, 2)).json()

    puts = Command(commands, "postgres", "pg-puts", cmd_puts)
    url_option(puts.number("--runs", 1, MAX_PUT_RUNS, 10, max_put_runs=MAX_PUT_RUNS)).json()


def cmd_window(args: argparse.Namespace) -> None:
    from labkit.studies.postgres.experiment import run_window, window_sweep

    if args.sweep:
        given = {
            f"the order {args.order}": args.order is not None,
            "--kill-at": args.kill_at is not None,
        }
        leave_out("pg_sweep", given)
        results = window_sweep(postgres_url=args.postgres_url)
    else:
        order = args.order or DEFAULT_ORDER
        first_point = WINDOW_ORDERS.get(order, ("none",))[0]
        results = [run_window(order, args.kill_at or first_point, None, args.postgres_url)]
    if args.json:
        print_json([{k: v for k, v in r.to_json().items() if k != "events"} for r in results])
        return
    from labkit.views.postgres import format_rows, header, window_rows

    echo(format_rows(header("window"), window_rows(results)))
    if len(results) == 1:
        echo(say("cli.said.run_folder_schema", folder=results[0].run_dir, schema=results[0].schema))


def cmd_race(args: argparse.Namespace) -> None:
    from labkit.studies.postgres.experiment import run_race

    results = [run_race(lock, None, args.postgres_url) for lock in args.lock]
    if args.json:
        print_json([r.to_json() for r in results])
        return
    from labkit.views.postgres import format_rows, header, race_rows

    echo(format_rows(header("race"), race_rows(results)))


def cmd_crash(args: argparse.Namespace) -> None:
    from labkit.studies.postgres.experiment import run_crash

    bar, advance = progress_bar("crashes", "crash")
    results = []
    with bar:
        for point in args.point:
            results.append(run_crash(point))
            advance(len(results), len(args.point), None)
    if args.json:
        print_json([r.to_json() for r in results])
        return
    from labkit.views.postgres import crash_rows, format_rows, header

    echo(format_rows(header("crash"), crash_rows(results)))
    echo("\n" + say("cli.said.server_said") + "\n  " + "\n  ".join(results[-1].recovery_log))


def cmd_durability(args: argparse.Namespace) -> None:
    from labkit.studies.durability.experiment import checkpointer_matrix

    if "postgres" not in args.checkpointer:
        leave_out("postgres_url", {"--postgres-url": args.postgres_url is not None})
    setups = {name: CHECKPOINTER_SETUPS[name] for name in args.checkpointer}
    bar, advance = progress_bar("trials", "kill")
    with bar:
        trials = checkpointer_matrix(
            args.graph,
            args.mode,
            args.trials,
            setups=setups,
            progress=advance,
            postgres_url=args.postgres_url,
        )
    if args.json:
        print_json([t.summary() for t in trials])
        return
    from labkit.views.postgres import format_rows, matrix_columns, matrix_rows

    echo(format_rows(matrix_columns(trials), matrix_rows(trials)))


def cmd_8039(args: argparse.Namespace) -> None:
    from labkit.studies.durability.experiment import DurabilitySpec, run_trials

    specs = [
        DurabilitySpec(
            "linear", "sync", 0, "checkpoint_after_b", checkpointer="postgres", writes_delay_ms=ms
        )
        for ms in (0, args.writes_delay_ms)
    ]
    trials = run_trials(specs, args.trials, postgres_url=args.postgres_url)
    if args.json:
        print_json([t.summary() for t in trials])
        return
    from labkit.views.postgres import format_rows, header, rerun_rows

    echo(format_rows(header("rerun"), rerun_rows(trials)))


def cmd_puts(args: argparse.Namespace) -> None:
    from labkit.studies.durability.experiment import put_latencies

    latencies = put_latencies(args.runs, postgres_url=args.postgres_url)
    if args.json:
        print_json(latencies)
        return
    from labkit.views.postgres import format_rows, header, latency_rows

    echo(format_rows(header("latency"), latency_rows(latencies)))
