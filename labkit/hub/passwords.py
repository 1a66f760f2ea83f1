"""The workshop's two passwords, made for each hub and kept beside its state, mode 0600.

SharedPasswordAuthenticator wants one password for every participant (8 characters or more)
and another for the admins (32 or more); a fixed one in the repository would open every hub
started from it, so each hub folder gets its own at its first start, kept for its restarts.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

PARTICIPANTS = "workshop-password"
INSTRUCTOR = "instructor-password"
PROXY = "proxy-token"


def secret(folder: Path, name: str, length: int) -> str:
    """The secret kept in folder/name, made (url-safe, `length` characters) if missing."""
    path = folder / name
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    value = secrets.token_urlsafe(length)[:length]
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as out:
        out.write(value + "\n")
    return value


def participants_password(folder: Path) -> str:
    """What every participant types (short enough to write on a whiteboard)."""
    return secret(folder, PARTICIPANTS, 12)


def instructor_password(folder: Path) -> str:
    """The admin's own password (JupyterHub asks 32 characters or more)."""
    return secret(folder, INSTRUCTOR, 40)


def proxy_token(folder: Path) -> str:
    """What the hub and its proxy share to change the proxy's routes."""
    return secret(folder, PROXY, 43)
