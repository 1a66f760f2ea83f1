"""`labkit` on the command line: the same runs as the notebooks, for instructors and scripts.

Bad input ends with exit status 2 and one line on stderr that names the valid choices.
"""

from __future__ import annotations

import sys

try:  # a Ctrl-C while Python loads labkit (its first tenth of a second) is one line too
    import argparse
    import errno
    import json
    import os
    import re
    import textwrap
    from collections.abc import Callable, Sequence

    from labkit.bench.errors import LabError, RunFailed, check_int
    from labkit.bench.folders import clean_runs
    from labkit.bench.server import ServerError
    from labkit.bench.snapshot import snapshot_folder
    from labkit.keypress import read_key
    from labkit.studies.commit_window.orders import NO_KILL, ORDERS, get_order
    from labkit.studies.commit_window.runs import run
    from labkit.studies.commit_window.spec import KILL_MODES
    from labkit.studies.commit_window.sweeps import sweep
    from labkit.studies.durability.experiment import MAX_SLOW_MS, MAX_TRIALS
    from labkit.studies.durability.pitfalls import PITFALLS, run_pitfall
    from labkit.studies.outbox.experiment import CONSUMERS, OUTBOX_KILL_POINTS
    from labkit.studies.unknown_outcome.spec import FAULTS, STRATEGIES
except KeyboardInterrupt:
    print("labkit: interrupted before it started; nothing ran", file=sys.stderr)
    raise SystemExit(130) from None

__all__ = ["main"]


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line, like every other bad input here."""

    def error(self, message: str) -> None:
        raise LabError(message)


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

    step = commands.add_parser(
        "step", help="pause at each kill point: Enter goes on, k kills, q quits"
    )
    step.add_argument("order", help=f"one of: {', '.join(ORDERS)}")
    step.add_argument("--out", help="a new folder for the run (default: a new temporary folder)")

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
        help="target_starts, or others_done (parallel: after p1 and p2 finish)",
    )
    lg.add_argument(
        "--trials",
        type=whole_number("trials", 1, MAX_TRIALS),
        default=4,
        help=f"kill-and-recover trials, 1 to {MAX_TRIALS} (default 4)",
    )
    lg.add_argument("--json", action="store_true", help="print a JSON list, one object a trial")

    ir = commands.add_parser("interrupt", help="study 001: interrupt and resume run the node again")
    ir.add_argument("--key", default="fresh", help="fresh (a new UUID per node run) or stable")
    ir.add_argument("--layout", default="combined", help="combined or split")
    ir.add_argument("--cross-process", action="store_true", help="resume in a fresh process")
    ir.add_argument(
        "--kill-at",
        default="none",
        help="none, before_create, after_create or paused (needs --cross-process)",
    )
    ir.add_argument("--json", action="store_true", help="print one JSON object")

    call = commands.add_parser("call", help="lesson 5: a remote call whose outcome is unknown")
    call.add_argument("--strategy", default="reconcile", help=f"one of: {', '.join(STRATEGIES)}")
    call.add_argument("--fault", default="reply_lost", help=f"one of: {', '.join(FAULTS)}")
    call.add_argument(
        "--timeout", type=float, default=0.2, help="seconds the caller waits for a reply"
    )
    call.add_argument("--out", help="a new folder for the run (default: a new temporary folder)")
    call.add_argument("--json", action="store_true", help="print one JSON object")
    call.add_argument(
        "--step", action="store_true", help="pause the caller at each point: Enter, k, q"
    )

    calls = commands.add_parser("call-sweep", help="lesson 5: every strategy under every fault")
    calls.add_argument(
        "--timeout", type=float, default=0.2, help="seconds the caller waits for a reply"
    )
    calls.add_argument("--out", help="a new folder for the sweep (default: a new temporary folder)")
    calls.add_argument("--json", action="store_true", help="print a JSON list")

    box = commands.add_parser("outbox", help="lesson 5: the outbox relay delivers twice")
    box.add_argument("--consumer", default="plain", help=f"one of: {', '.join(CONSUMERS)}")
    how = box.add_mutually_exclusive_group()
    how.add_argument("--kill-at", default="none", help=f"one of: {', '.join(OUTBOX_KILL_POINTS)}")
    how.add_argument("--sweep", action="store_true", help="every kill point, both consumers")
    how.add_argument("--step", action="store_true", help="pause at each boundary: Enter, k, q")
    how.add_argument(
        "--graph", action="store_true", help="a LangGraph node writes the outbox row; replay it"
    )
    box.add_argument("--out", help="a new folder for the run (default: a new temporary folder)")
    box.add_argument("--json", action="store_true", help="print JSON")

    gallery = commands.add_parser("pitfall", help="reproduce one of study 004's errors live")
    gallery.add_argument("name", help="one of: " + ", ".join(PITFALLS))

    clean = commands.add_parser("clean", help="remove every run folder kept in the temp directory")
    clean.add_argument("--dry-run", action="store_true", help="only say what would be removed")

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


def progress_bar(desc: str, unit: str) -> tuple[object, Callable[[int, int, object], None]]:
    """A terminal progress bar (on stderr) and the `progress(done, total, item)` that moves it."""
    from tqdm import tqdm

    bar = tqdm(desc=desc, unit=unit, file=sys.stderr, disable=None)

    def advance(done: int, total: int, _item: object) -> None:
        bar.total = total
        bar.update(done - bar.n)

    return bar, advance


def cmd_sweep(args: argparse.Namespace) -> None:
    from labkit.views.text import format_sweep

    modes = KILL_MODES if args.kill_mode == "both" else (args.kill_mode,)
    bar, advance = progress_bar("sweep", "run")
    with bar:
        results = sweep(modes, args.out, progress=advance)
    if args.json:
        print(json.dumps([r.summary() for r in results], indent=1))
    else:
        print(format_sweep(results))


def cmd_show(args: argparse.Namespace) -> None:
    from labkit.views.text import format_snapshot

    print(format_snapshot(snapshot_folder(args.run_dir)))


STEP_KEYS = "Enter or c: continue · k: kill -9 here · q: quit (kills and reaps the worker)"


def cmd_step(args: argparse.Namespace, answer: Callable[[str], str] = read_key) -> None:
    """For a projector: show the files at each stop; one key goes on, kills there, or quits."""
    from labkit.studies.commit_window.stepping import StepSession
    from labkit.views.text import format_run

    order = get_order(args.order)
    with StepSession(order.name, args.out) as session:
        print(f"{order.name}: {order.summary}")
        print(f"kill points: {' → '.join(order.kill_points)}")
        print(f"keys: {STEP_KEYS}")
        if step_through(session, answer):
            print("\n" + format_run(session.recover()))


def step_through(session: object, answer: Callable[[str], str]) -> bool:
    """Show the files at each stop of a step session (commit window or outbox) and act on one
    key; False if the reader quit (the worker killed and reaped), True when recovery is next."""
    from labkit.views.text import format_snapshot

    while not session.finished:
        print(f"\n=== paused at {session.paused_at!r}; the files hold now:")
        print(format_snapshot(session.state()))
        choice = answer("Enter/c, k or q > ").strip().lower()
        if choice in ("", "c"):
            if session.proceed() is None:
                print("The worker finished its step; recovering in a fresh process ...")
        elif choice == "k":
            print(f"SIGKILL at {session.kill()!r}; recovering in a fresh process ...")
        elif choice == "q":
            session.close()
            print(f"Quit: the worker was killed and reaped. Run folder: {session.run_dir}")
            return False
        else:
            print(f"{choice!r} is not one of the keys. {STEP_KEYS}")
    return True


def cmd_durability(args: argparse.Namespace) -> None:
    from labkit.studies.durability.experiment import DurabilitySpec, run_trials

    spec = DurabilitySpec(args.graph, args.mode, args.slow_ms, args.kill_moment)
    bar, advance = progress_bar("trials", "kill")
    with bar:
        trials = run_trials([spec], args.trials, progress=advance)
    if args.json:
        print(json.dumps([t.summary() for t in trials], indent=1))
        return
    from labkit.views.text import format_grid

    rows = [
        (
            n + 1,
            t.first_exit,
            t.checkpoints,
            t.writes,
            t.orphan_writes,
            "yes" if t.resumed else "no",
            f"{t.ledger_lines}/{t.baseline_lines}",
            " ".join(t.rerun_nodes) or "-",
            f"FAILED: {t.failure}" if t.failure else "-",
        )
        for n, t in enumerate(trials)
    ]
    print(
        format_grid(
            (
                "trial",
                "first exit",
                "checkpoints",
                "writes",
                "writes of unsaved checkpoints",
                "resumed",
                "ledger/clean",
                "ran twice",
                "failed (no outcome)",
            ),
            rows,
        )
    )


def cmd_interrupt(args: argparse.Namespace) -> None:
    from labkit.studies.interrupt_resume.experiment import run_interrupt

    result = run_interrupt(args.key, args.layout, args.cross_process, args.kill_at)
    if args.json:
        print(json.dumps(result))
        return
    from labkit.views.text import format_interrupt

    print(format_interrupt(result))


def cmd_call(args: argparse.Namespace, answer: Callable[[str], str] = read_key) -> None:
    from labkit.studies.unknown_outcome.experiment import run_call
    from labkit.views.text import format_call

    if args.step:
        from labkit.studies.unknown_outcome.caller import CALLER_POINTS
        from labkit.studies.unknown_outcome.spec import CallSpec
        from labkit.studies.unknown_outcome.stepping import CallStepSession

        if args.json:
            raise LabError("--step shows both sides as it goes; it prints no JSON")
        if args.timeout != CallSpec.timeout:
            raise LabError(
                f"--step waits the caller's usual {CallSpec.timeout} s; leave out --timeout"
            )
        with CallStepSession(args.strategy, args.fault, args.out) as session:
            print(f"{args.strategy} caller, fault {args.fault}: {FAULTS[args.fault]}")
            print(f"the caller stops at: {' → '.join(CALLER_POINTS)}")
            print(f"keys: {STEP_KEYS}")
            if step_through(session, answer):
                print("\n" + format_call(session.recover()))
        return
    result = run_call(args.strategy, args.fault, args.timeout, args.out)
    print(json.dumps(result.summary()) if args.json else format_call(result))


def cmd_call_sweep(args: argparse.Namespace) -> None:
    from labkit.studies.unknown_outcome.experiment import sweep_calls
    from labkit.views.text import format_call_sweep

    bar, advance = progress_bar("calls", "call")
    with bar:
        results = sweep_calls(timeout=args.timeout, out=args.out, progress=advance)
    if args.json:
        print(json.dumps([r.summary() for r in results], indent=1))
    else:
        print(format_call_sweep(results))


def cmd_outbox(args: argparse.Namespace, answer: Callable[[str], str] = read_key) -> None:
    from labkit.studies.outbox.experiment import OutboxSpec, execute_outbox, outbox_sweep
    from labkit.views.outbox import format_outbox, format_outbox_sweep

    spec = OutboxSpec(args.consumer, args.kill_at, args.out)  # bad input: one line, status 2
    if args.sweep:
        if args.consumer != "plain":
            raise LabError("--sweep runs both consumers; leave out --consumer")
        bar, advance = progress_bar("outbox sweep", "run")
        with bar:
            results = outbox_sweep(args.out, progress=advance)
        print(
            json.dumps([r.summary() for r in results], indent=1)
            if args.json
            else format_outbox_sweep(results)
        )
        return
    if args.graph:
        from labkit.studies.outbox.replay import run_outbox_graph
        from labkit.views.text import process_exits

        r = run_outbox_graph(args.consumer, args.out)
        if args.json:
            print(json.dumps(r))
            return
        wrote = ["order + message" if ln["wrote_order"] else "nothing" for ln in r["ledger"]]
        print(f"{args.consumer} consumer, graph killed after its node committed")
        print(f"  node runs (ledger): {r['node_runs']}, writing: {', then '.join(wrote)}")
        print(f"  processes: {process_exits(r['exits'])}")
        a, n = r["after"], r["deliveries"]
        print(f"  outbox rows {a['outbox']} · deliveries {n} · effects {a['effects']}")
        print(f"  outcome: {r['outcome']}" + (f" ({r['failure']})" if r["failure"] else ""))
        print(f"  run folder: {r['run_dir']}")
        return
    if args.step:
        if args.json:
            raise LabError("--step shows the files as it goes; it prints no JSON")
        from labkit.studies.outbox.stepping import STOPS, OutboxStepSession

        with OutboxStepSession(args.consumer, args.out) as session:
            print(f"{args.consumer} consumer: {CONSUMERS[args.consumer]}")
            for stage, points in STOPS.items():
                print(f"{stage} stops at: {' → '.join(points)}")
            print(f"keys: {STEP_KEYS}")
            if step_through(session, answer):
                print("\n" + format_outbox(session.recover()))
        return
    result = execute_outbox(spec)
    print(json.dumps(result.summary()) if args.json else format_outbox(result))


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


def cmd_clean(args: argparse.Namespace) -> int:
    done = clean_runs(dry_run=args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    print(f"{verb} {len(done.removed)} run folders ({done.size / 1e6:.1f} MB) from {done.home}")
    if done.in_use:
        print(f"left {len(done.in_use)} whose run goes on: {', '.join(done.in_use)}")
    if done.not_ours:
        print(f"left {len(done.not_ours)} that labkit did not make: {', '.join(done.not_ours)}")
    if done.stuck:
        sys.stdout.flush()  # the summary first, then what went wrong
        cannot = "cannot remove" if args.dry_run else "could not remove"
        print(f"labkit: error: {cannot} {'; '.join(done.stuck)}", file=sys.stderr)
        return 2
    return 0


# How a write to stdout fails when it goes to a full disk, /dev/full or a device in trouble.
OUTPUT_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)

COMMANDS = {
    "orders": cmd_orders,
    "run": cmd_run,
    "sweep": cmd_sweep,
    "step": cmd_step,
    "show": cmd_show,
    "durability": cmd_durability,
    "pitfall": cmd_pitfall,
    "interrupt": cmd_interrupt,
    "outbox": cmd_outbox,
    "call": cmd_call,
    "call-sweep": cmd_call_sweep,
    "clean": cmd_clean,
}


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command == "step" or getattr(args, "step", False):  # before a worker starts
            if sys.stdin is None:
                raise LabError("labkit step reads your keys from stdin, and stdin is closed")
            if sys.stdout is None:
                raise LabError("labkit step shows the files on stdout, and stdout is closed")
        status = COMMANDS[args.command](args) or 0
        if sys.stdout is not None:
            sys.stdout.flush()  # a reader that has gone shows here, not at exit as a traceback
        return status
    except BrokenPipeError:  # `labkit orders | head -1`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush
        return 141  # 128 + SIGPIPE: what a shell reports for `cat` stopped the same way
    except (LabError, RunFailed) as error:  # bad input, or a disk that filled during a run
        print(f"labkit: error: {error}", file=sys.stderr)
        return 2
    except ServerError as error:
        print(f"labkit: the trial server failed: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # labkit names the files it fails on: this is stdout (> /dev/full)
        if error.filename is not None or error.errno not in OUTPUT_ERRORS:
            raise
        if sys.stdout is not None:  # what is left in its buffer could not be written either
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        print(f"labkit: error: cannot write the output: {error.strerror}", file=sys.stderr)
        return 2
    except EOFError:
        print("labkit: input ended; the worker was killed and reaped", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("labkit: interrupted; every worker was killed and reaped", file=sys.stderr)
        return 130
