"""Start the hub and stop it: `python3 tasks.py hub [--participants N]`.

The hub runs `jupyterhub -f labkit/hub/jupyterhub_config.py` from the lab's .venv, under its
keeper (keeper.py), in a session of their own: however the hub ends, the keeper then ends what
it left, its proxy, its services and every participant's server.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from labkit.bench.errors import LabError, refusal
from labkit.bench.python_command import FRESH_MAIN, LABKIT_ROOT, isolated_python
from labkit.hub import participants, passwords, proxy
from labkit.hub.services import room_folder
from labkit.hub.settings import ENV, FILE, Settings
from labkit.language import say
from labkit.language.refusals import error_line

ROOT = Path(__file__).resolve().parents[2]
CONFIG = Path(__file__).with_name("jupyterhub_config.py")
FOLDER = ROOT / ".hub" / "state"  # the default hub's folder (git ignores .hub/)
UP_TIMEOUT = 120.0
LAST_PORT = 65535 - 81  # the hub takes the port given and the three after it, and port + 81
CULL_AFTER = (60, 7 * 24 * 3600)  # seconds idle: a minute to a week


def start(settings: Settings) -> subprocess.Popen:
    """The proxy installed, the passwords made, the hub started (its log: hub.log in its
    folder). Returns its keeper's process once the hub's API answers."""
    proxy.install()
    settings.save()
    room_folder(settings)
    passwords.participants_password(settings.folder)
    passwords.instructor_password(settings.folder)
    log = open(settings.folder / "hub.log", "ab")  # noqa: SIM115 (the hub's, for its life)
    env = {**os.environ, ENV: str(settings.folder / FILE)}
    env.pop("TMPDIR", None)  # each participant's runs home is theirs in /tmp
    process = subprocess.Popen(
        kept(hub_command()), cwd=settings.folder, env=env, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    log.close()
    try:
        wait_until_up(settings, process)
    except BaseException:
        stop(process)
        raise
    return process


def hub_command() -> list[str]:
    return [str(Path(sys.prefix) / "bin" / "jupyterhub"), "-f", str(CONFIG)]


def kept(command: list[str]) -> list[str]:
    """`command` run by the hub's keeper, from this labkit's own folder (as a worker is): it
    ends with this process."""
    job = json.dumps({"command": command, "caller": os.getpid()})
    return isolated_python("-c", FRESH_MAIN, "labkit.hub.keeper:keep", job, LABKIT_ROOT)


def wait_until_up(settings: Settings, process: subprocess.Popen) -> None:
    """Until the hub's API answers through the proxy; an error naming its log if it ends."""
    deadline = time.monotonic() + UP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise refusal("hub_ended", status=process.returncode, log=log_of(settings))
        with (
            contextlib.suppress(OSError, ValueError),
            urllib.request.urlopen(f"{settings.url}/hub/api/", timeout=5) as answer,
        ):
            if "version" in json.load(answer):
                return
        time.sleep(0.3)
    raise refusal("hub_no_answer", seconds=f"{UP_TIMEOUT:.0f}", log=log_of(settings))


def log_of(settings: Settings) -> str:
    return str(settings.folder / "hub.log")


def stop(process: subprocess.Popen, grace: float = 30.0) -> None:
    """Stop the hub through its keeper (`process`), each step given `grace` seconds: a SIGTERM
    (the hub stops its proxy and servers), a second one (the keeper SIGKILLs the hub); either
    way the keeper then ends what the hub left. A keeper that hangs: SIGKILL to its group."""
    for _ in range(2):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=grace)
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python3 tasks.py hub", description=__doc__)
    parser.add_argument(
        "--participants",
        type=int,
        metavar="N",
        help="make system users PREFIX1..PREFIXN (and PREFIXinstructor), as root",
    )
    parser.add_argument("--prefix", default=participants.PREFIX, help="of the users' names")
    parser.add_argument("--port", type=int, default=8000, help="on 127.0.0.1 (default 8000)")
    parser.add_argument(
        "--cull-after",
        type=int,
        default=3600,
        metavar="SECONDS",
        help="stop a server idle this long (default 3600)",
    )
    parser.add_argument(
        "--remove-participants",
        action="store_true",
        help="remove the users made with PREFIX, their homes and runs, then stop",
    )
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    options = parse(argv)
    try:
        run(options)
    except LabError as error:
        print(f"hub: {error_line(error)}", file=sys.stderr)
        sys.exit(2)


def check(options: argparse.Namespace) -> str:
    """Every argument, checked before anything is made (the system users first of all); the
    prefix, checked."""
    prefix = participants.check_prefix(options.prefix)
    count = options.participants
    if count is not None and not 1 <= count <= participants.MAX_PARTICIPANTS:
        raise refusal("hub_participants", last=participants.MAX_PARTICIPANTS, value=count)
    if not 1 <= options.port <= LAST_PORT:
        raise refusal("hub_port", last=LAST_PORT, value=options.port)
    low, high = CULL_AFTER
    if not low <= options.cull_after <= high:
        raise refusal("hub_cull_after", low=low, high=high, value=options.cull_after)
    return prefix


def run(options: argparse.Namespace) -> None:
    prefix = check(options)
    participants.need_root()
    instructor = participants.instructor(prefix)
    if options.remove_participants:
        participants.remove([*participants.existing(prefix), instructor])
        return
    count = options.participants
    if count is not None:
        participants.create([*participants.names(count, prefix), instructor])
    names = participants.existing(prefix)
    if not names:
        raise refusal("hub_no_participants", prefix=prefix)
    settings = Settings(
        FOLDER, tuple(names), instructor, options.port, options.port + 81, options.port + 1,
        options.port + 2, options.cull_after,
    )  # fmt: skip
    process = start(settings)
    signal.signal(signal.SIGTERM, ended)  # stopped by a service manager: the same as Ctrl-C
    print(banner(settings), flush=True)
    try:
        process.wait()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        stop(process)


def banner(settings: Settings) -> str:
    """What the instructor is told once the hub is up, in their language (LABKIT_LANGUAGE):
    where it is, the passwords, the room, the log."""
    names = settings.participants
    return say(
        "hub.up",
        url=settings.url,
        count=len(names),
        first=names[0],
        last=names[-1],
        password=passwords.participants_password(settings.folder),
        instructor=settings.instructor,
        instructor_password=settings.folder / passwords.INSTRUCTOR,
        folder=settings.folder,
        log=settings.folder / "hub.log",
    )


def ended(number: int, frame: object) -> None:
    raise SystemExit(128 + number)
