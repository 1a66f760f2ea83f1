"""configurable-http-proxy, the hub's front door, from the npm registry into the checkout.

JupyterHub starts it itself (ConfigurableHTTPProxy); it lives in `.hub/proxy/` (git ignores
`.hub/`), pinned here, so that every machine runs the same proxy and nothing goes in /usr.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from pathlib import Path

from labkit.bench.errors import refusal

VERSION = "5.3.0"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / ".hub" / "proxy"
PACKAGE = FOLDER / "node_modules" / "configurable-http-proxy"
COMMAND = FOLDER / "node_modules" / ".bin" / "configurable-http-proxy"


def installed_version() -> str | None:
    """The version in .hub/proxy, or None when it is missing."""
    try:
        return json.loads((PACKAGE / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def install() -> Path:
    """configurable-http-proxy at VERSION in .hub/proxy (npm, once); the path of its command.
    Two hubs starting at once (the tests, on several cores) install it once: a lock."""
    if installed_version() == VERSION and COMMAND.exists():
        return COMMAND
    FOLDER.mkdir(parents=True, exist_ok=True)
    with open(FOLDER.parent / "proxy.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed_version() == VERSION and COMMAND.exists():
            return COMMAND
        return npm_install()


def npm_install() -> Path:
    npm = shutil.which("npm")
    if npm is None:
        raise refusal("hub_no_npm")
    package = f"configurable-http-proxy@{VERSION}"
    print(f"Installing {package} into {FOLDER} ...", flush=True)
    subprocess.run(
        [npm, "install", "--prefix", str(FOLDER), "--no-audit", "--no-fund", "--silent", package],
        check=True,
    )
    if installed_version() != VERSION:
        raise refusal("hub_npm_failed", package=package, folder=str(FOLDER))
    return COMMAND
