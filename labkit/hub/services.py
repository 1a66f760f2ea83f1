"""The hub-managed services and the roles that give them their scopes: the one function that
another service (the instructor's room, issue 30 part 4) adds itself to.
"""

from __future__ import annotations

import os
import pwd
import sys
from pathlib import Path

from labkit.bench.errors import refusal
from labkit.bench.system_accounts import system_account
from labkit.hub.settings import Settings

CULLER_SCOPES = ["list:users", "read:users:activity", "read:servers", "delete:servers"]
ROOM = "room"
ROOM_ACCESS = f"access:services!service={ROOM}"
SERVER_SCOPES = ["users:activity!user", "access:servers!server"]  # JupyterHub's own default
SERVICE_USER = "labkit-hub"  # the room and the culler, under a root hub: no one else's user


def room_folder(settings: Settings) -> Path:
    """The room's own folder, beside the hub's (which is root's alone): made 0700 and owned by
    the room's user (SERVICE_USER under a root hub), where its answers survive a restart. Its
    user must reach it: every folder above it open to others for passing through. A file of
    anyone else's in it is refused, and left as it is (`refuse_others_files`)."""
    folder = settings.room_folder
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if folder.is_symlink():
        raise refusal("room_folder_link", folder=str(folder))
    as_root = os.geteuid() == 0
    account = system_account(SERVICE_USER) if as_root else (os.geteuid(), os.getegid())
    refuse_others_files(folder, account[0])
    if as_root:
        os.chown(folder, *account)
        closed = [p for p in folder.parents if not p.stat().st_mode & 0o001]
        if closed:
            raise refusal(
                "room_folder_closed", user=SERVICE_USER, folder=str(folder), closed=str(closed[0])
            )
    folder.chmod(0o700)
    return folder


def refuse_others_files(folder: Path, uid: int) -> None:
    """Refuse a room's folder that holds files of another user than the room's (`uid`), which
    the room could not open. An older labkit ran the room as `nobody`, whose every process could
    write its folder: nothing proves such a file the room's own, so the lab neither takes it
    over nor removes it, and one line says what to do."""
    theirs = {}  # file name: its owner's name
    for entry in os.scandir(folder):
        owner = entry.stat(follow_symlinks=False).st_uid
        if owner != uid:
            theirs[entry.name] = user_name(owner)
    if theirs:
        raise refusal(
            "room_files_not_its_own", user=user_name(uid), folder=str(folder),
            files=", ".join(sorted(theirs)), owners=", ".join(sorted(set(theirs.values()))),
        )  # fmt: skip


def user_name(uid: int) -> str:
    """The name of user `uid`, or its number where it has none."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def room_environment(settings: Settings) -> dict[str, str]:
    """For every participant's server: where their kernel finds the room (labkit/room/client.py)."""
    return {"LABKIT_ROOM_URL": f"http://127.0.0.1:{settings.room_port}/services/{ROOM}/"}


def services(settings: Settings) -> tuple[list[dict], list[dict]]:
    """(JupyterHub.services, JupyterHub.load_roles) for this hub. Each service runs as the
    lab's own SERVICE_USER when the hub is root: it needs the hub's API, never a file of
    anyone's, and a shared user (`nobody`) would let that user's every process at its files."""
    as_service = {}
    if os.geteuid() == 0:
        system_account(SERVICE_USER)  # made, if missing, before the hub looks it up
        as_service = {"user": SERVICE_USER, "cwd": "/"}
    culler = {
        "name": "idle-culler",
        "command": [
            sys.executable,
            "-m",
            "jupyterhub_idle_culler",
            f"--timeout={settings.cull_after}",
        ],
        **as_service,
    }
    culler_role = {"name": "idle-culler", "scopes": CULLER_SCOPES, "services": ["idle-culler"]}
    room = {
        "name": ROOM,
        "url": f"http://127.0.0.1:{settings.room_port}",
        "command": [sys.executable, "-m", "labkit.room"],
        "oauth_no_confirm": True,
        "environment": {
            "LABKIT_ROOM_INSTRUCTORS": settings.instructor,
            "LABKIT_ROOM_FOLDER": str(settings.room_folder),
        },
        **as_service,
    }
    # everyone of the room may reach the room (and nothing else through it); a kernel's own
    # token ($JUPYTERHUB_API_TOKEN, the `server` role) gets that one scope more than by default
    people = [*settings.participants, settings.instructor]
    room_role = {"name": "room-member", "scopes": [ROOM_ACCESS], "users": people}
    server_role = {"name": "server", "scopes": [*SERVER_SCOPES, ROOM_ACCESS]}
    return [culler, room], [culler_role, room_role, server_role]
