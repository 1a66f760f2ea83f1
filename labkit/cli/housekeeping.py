"""Commands about run folders, whichever study made them: print one, clean them all up."""

from __future__ import annotations

import argparse
import sys

from labkit.bench.folders import KEEP_MB_VARIABLE, clean_runs, runs_keep_bytes
from labkit.bench.postgres import ENV_URL, clean_schemas, given_url, redacted
from labkit.bench.snapshot import snapshot_folder
from labkit.language import say

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    clean = commands.add_parser("clean", help=say("cli.housekeeping.clean.help"))
    clean.add_argument("--dry-run", action="store_true", help=say("cli.housekeeping.clean.dry_run"))
    clean.add_argument(
        "--postgres-url",
        help=say("cli.housekeeping.clean.postgres_url", env_url=ENV_URL),
    )
    clean.set_defaults(handler=cmd_clean)

    show = commands.add_parser("show", help=say("cli.housekeeping.show.help"))
    show.add_argument("run_dir")
    show.set_defaults(handler=cmd_show)


def cmd_show(args: argparse.Namespace) -> None:
    from labkit.views.text import format_snapshot

    print(format_snapshot(snapshot_folder(args.run_dir)))


def cmd_clean(args: argparse.Namespace) -> int:
    url = given_url(args.postgres_url)  # every argument checked before anything goes
    keep = runs_keep_bytes()
    schemas = clean_schemas(url, dry_run=args.dry_run) if url else None
    done = clean_runs(dry_run=args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    print(f"{verb} {len(done.removed)} run folders ({done.size / 1e6:.1f} MB) from {done.home}")
    if schemas:  # lesson 7 on a reader's server: a schema per run, dropped once its run is over
        drop = "would drop" if args.dry_run else "dropped"
        print(f"{drop} {len(schemas.dropped)} schemas of finished runs on {redacted(url)}")
        if schemas.left:
            print(f"left {len(schemas.left)} schemas: {', '.join(schemas.left)}")
    if args.dry_run:
        pruning = (
            f"new runs prune it to the newest {keep / 1e6:.0f} MB ({KEEP_MB_VARIABLE})"
            if keep
            else f"pruning is off ({KEEP_MB_VARIABLE}=0)"
        )
        print(f"the runs home holds {done.home_size / 1e6:.1f} MB; {pruning}")
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
