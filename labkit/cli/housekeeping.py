"""Commands about run folders, whichever study made them: print one, clean them all up."""

from __future__ import annotations

import argparse
import sys

from labkit.bench.folders import KEEP_MB_VARIABLE, clean_runs, runs_keep_bytes
from labkit.bench.postgres import ENV_URL, clean_schemas, given_url, redacted
from labkit.bench.snapshot import snapshot_folder
from labkit.cli.common import Command, echo
from labkit.language import say

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    clean = Command(commands, "housekeeping", "clean", cmd_clean).switch("--dry-run")
    clean.add("--postgres-url", fields={"env_url": ENV_URL})

    Command(commands, "housekeeping", "show", cmd_show).parser.add_argument("run_dir")


def cmd_show(args: argparse.Namespace) -> None:
    from labkit.views.text import format_snapshot

    echo(format_snapshot(snapshot_folder(args.run_dir)))


def cmd_clean(args: argparse.Namespace) -> int:
    url = given_url(args.postgres_url)  # every argument checked before anything goes
    keep = runs_keep_bytes()
    schemas = clean_schemas(url, dry_run=args.dry_run) if url else None
    done = clean_runs(dry_run=args.dry_run)
    would = "would_" if args.dry_run else ""  # a dry run says what it would do
    mb = done.size / 1e6
    echo(say(f"cli.clean.{would}remove", n=len(done.removed), mb=mb, home=done.home))
    if schemas:  # lesson 7 on a reader's server: a schema per run, dropped once its run is over
        n, where = len(schemas.dropped), redacted(url)
        echo(say(f"cli.clean.{would}drop", n=n, where=where))
        if schemas.left:
            echo(say("cli.clean.left_schemas", n=len(schemas.left), names=", ".join(schemas.left)))
    if args.dry_run:
        pruning = (
            say("cli.clean.prune", mb=keep / 1e6, variable=KEEP_MB_VARIABLE)
            if keep
            else say("cli.clean.prune_off", variable=KEEP_MB_VARIABLE)
        )
        echo(say("cli.clean.home", mb=done.home_size / 1e6, pruning=pruning))
    if done.in_use:
        echo(say("cli.clean.in_use", n=len(done.in_use), names=", ".join(done.in_use)))
    if done.not_ours:
        echo(say("cli.clean.not_ours", n=len(done.not_ours), names=", ".join(done.not_ours)))
    if done.stuck:
        sys.stdout.flush()  # the summary first, then what went wrong
        stuck = "; ".join(done.stuck)
        print(say(f"cli.clean.{would}stuck", what=stuck), file=sys.stderr)
        return 2
    return 0
