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

from labkit.bench.postgres import ENV_URL
from labkit.cli.common import leave_out, print_json, progress_bar, whole_number
from labkit.language import say
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


def url_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--postgres-url",
        help=say("cli.postgres.common.postgres_url", env_url=ENV_URL),
    )


def listed(what: str, choices: object) -> Callable[[str], tuple[str, ...]]:
    """An argparse type: a comma-separated list, each item one of `choices` (or 'all')."""

    def parse(text: str) -> tuple[str, ...]:
        picked = tuple(choices) if text == ALL else tuple(t.strip() for t in text.split(","))
        wrong = [p for p in picked if p not in choices]
        if wrong:
            raise argparse.ArgumentTypeError(
                f"unknown {what} {wrong[0]!r}; choose from: {', '.join(choices)} (or {ALL})"
            )
        return picked

    return parse


def register(commands: argparse._SubParsersAction) -> None:
    window = commands.add_parser("pg-window", help=say("cli.postgres.pg_window.help"))
    window.add_argument(
        "order",
        nargs="?",
        help=say(
            "cli.postgres.pg_window.order",
            choices=", ".join(WINDOW_ORDERS),
            default_order=DEFAULT_ORDER,
        ),
    )
    window.add_argument("--kill-at", default=None, help=say("cli.postgres.pg_window.kill_at"))
    window.add_argument("--sweep", action="store_true", help=say("cli.postgres.pg_window.sweep"))
    url_option(window)
    window.add_argument("--json", action="store_true", help=say("cli.postgres.pg_window.json"))
    window.set_defaults(handler=cmd_window)

    race = commands.add_parser("pg-race", help=say("cli.postgres.pg_race.help"))
    race.add_argument(
        "--lock",
        type=listed("lock", LOCKS),
        default=tuple(LOCKS),
        help=say("cli.postgres.pg_race.lock", choices=", ".join(LOCKS)),
    )
    url_option(race)
    race.add_argument("--json", action="store_true", help=say("cli.postgres.pg_race.json"))
    race.set_defaults(handler=cmd_race)

    crash = commands.add_parser("pg-crash", help=say("cli.postgres.pg_crash.help"))
    crash.add_argument(
        "--point",
        type=listed("crash point", CRASH_POINTS),
        default=tuple(CRASH_POINTS),
        help=say("cli.postgres.pg_crash.point", choices=", ".join(CRASH_POINTS), all=ALL),
    )
    crash.add_argument("--json", action="store_true", help=say("cli.postgres.pg_crash.json"))
    crash.set_defaults(handler=cmd_crash)

    matrix = commands.add_parser("pg-durability", help=say("cli.postgres.pg_durability.help"))
    matrix.add_argument("--graph", type=listed("graph", GRAPHS), default=GRAPHS)
    matrix.add_argument(
        "--mode",
        type=listed("durability mode", DURABILITY_MODES),
        default=("sync", "async"),
        help=say("cli.postgres.pg_durability.mode", choices=", ".join(DURABILITY_MODES)),
    )
    matrix.add_argument(
        "--checkpointer",
        type=listed("checkpointer", CHECKPOINTER_SETUPS),
        default=tuple(CHECKPOINTER_SETUPS),
        help=say(
            "cli.postgres.pg_durability.checkpointer",
            choices=", ".join(CHECKPOINTER_SETUPS),
            all=ALL,
        ),
    )
    matrix.add_argument(
        "--trials",
        type=whole_number("trials", 1, MAX_TRIALS),
        default=2,
        help=say("cli.postgres.pg_durability.trials", max_trials=MAX_TRIALS),
    )
    url_option(matrix)
    matrix.add_argument("--json", action="store_true", help=say("cli.postgres.pg_durability.json"))
    matrix.set_defaults(handler=cmd_durability)

    rerun = commands.add_parser("pg-8039", help=say("cli.postgres.pg_8039.help"))
    rerun.add_argument(
        "--writes-delay-ms",
        type=whole_number("writes-delay-ms", 1, MAX_SLOW_MS),
        default=80,
        help=say("cli.postgres.pg_8039.writes_delay_ms", max_slow_ms=MAX_SLOW_MS),
    )
    rerun.add_argument(
        "--trials",
        type=whole_number("trials", 1, MAX_TRIALS),
        default=2,
        help=say("cli.postgres.pg_8039.trials"),
    )
    url_option(rerun)
    rerun.add_argument("--json", action="store_true", help=say("cli.postgres.pg_8039.json"))
    rerun.set_defaults(handler=cmd_8039)

    puts = commands.add_parser("pg-puts", help=say("cli.postgres.pg_puts.help"))
    puts.add_argument(
        "--runs",
        type=whole_number("runs", 1, MAX_PUT_RUNS),
        default=10,
        help=say("cli.postgres.pg_puts.runs", max_put_runs=MAX_PUT_RUNS),
    )
    url_option(puts)
    puts.add_argument("--json", action="store_true", help=say("cli.postgres.pg_puts.json"))
    puts.set_defaults(handler=cmd_puts)


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

    print(format_rows(header("window"), window_rows(results)))
    if len(results) == 1:
        print(
            say("cli.said.run_folder_schema", folder=results[0].run_dir, schema=results[0].schema)
        )


def cmd_race(args: argparse.Namespace) -> None:
    from labkit.studies.postgres.experiment import run_race

    results = [run_race(lock, None, args.postgres_url) for lock in args.lock]
    if args.json:
        print_json([r.to_json() for r in results])
        return
    from labkit.views.postgres import format_rows, header, race_rows

    print(format_rows(header("race"), race_rows(results)))


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

    print(format_rows(header("crash"), crash_rows(results)))
    print("\n" + say("cli.said.server_said") + "\n  " + "\n  ".join(results[-1].recovery_log))


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

    print(format_rows(matrix_columns(trials), matrix_rows(trials)))


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

    print(format_rows(header("rerun"), rerun_rows(trials)))


def cmd_puts(args: argparse.Namespace) -> None:
    from labkit.studies.durability.experiment import put_latencies

    latencies = put_latencies(args.runs, postgres_url=args.postgres_url)
    if args.json:
        print_json(latencies)
        return
    from labkit.views.postgres import format_rows, header, latency_rows

    print(format_rows(header("latency"), latency_rows(latencies)))
