"""Set up the lab and run it, or run its tests. Needs only Python 3.11+ on Linux or macOS.

    python3 tasks.py lab     # set up .venv, then JupyterLab on notebooks/00_start_here.ipynb
    python3 tasks.py test    # set up what is missing, then the whole test suite
    python3 tasks.py binder  # write Binder's part of environment.yml and the README's links

The packages and their pins come from environment.yml, the one source of the environment
(Binder builds the same file with conda). The set-up is skipped when nothing has changed.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / "bin"
SUPPORTED = "Commit Window Lab runs on Linux and macOS"
ON_WINDOWS = (
    f"{SUPPORTED}; on Windows, run it in WSL 2: in PowerShell "
    "`wsl --install` (then restart), open Ubuntu, `sudo apt install python3-venv git`, clone "
    "the repository there and run `python3 tasks.py lab`. Or open the lessons on Binder (the "
    "links in README.md), with nothing to install."
)
# The GitHub repository (owner/name) whose Binder links the README gives: the one place to
# change in a fork, then run `python3 tasks.py binder`.
BINDER_REPOSITORY = "commit-window-lab/commit-window-lab"
BINDER_LINK = re.compile(r"https://mybinder\.org/v2/gh/[\w.-]+/[\w.-]+/")
DEVELOPMENT = "      # --- development"  # environment.yml's line where Binder's part ends
PIN = re.compile(r"^\s+- ([A-Za-z0-9_.\-\[\]]+==[^\s#]+)", re.MULTILINE)


def pinned_packages() -> list[str]:
    """Every `name==version` line of environment.yml's pip section."""
    return PIN.findall((ROOT / "environment.yml").read_text())


def lessons_environment() -> str:
    """environment.yml down to its development line: what Binder builds, and all it builds."""
    text = (ROOT / "environment.yml").read_text()
    return text[: text.index(DEVELOPMENT)]


def binder(extra: list[str]) -> None:
    """Write binder/environment.yml and point every Binder link of the README at
    BINDER_REPOSITORY."""
    (ROOT / "binder" / "environment.yml").write_text(lessons_environment())
    readme = ROOT / "README.md"
    links = f"https://mybinder.org/v2/gh/{BINDER_REPOSITORY}/"
    readme.write_text(BINDER_LINK.sub(links, readme.read_text()))


def set_up() -> None:
    """Create .venv and install the pinned packages and labkit, unless that is already done."""
    if sys.platform not in ("linux", "darwin"):
        windows = sys.platform in ("win32", "cygwin")
        sys.exit(ON_WINDOWS if windows else f"{SUPPORTED}, not {sys.platform}; or use Binder")
    if sys.version_info < (3, 11):  # noqa: UP036 (this file runs before any venv exists)
        sys.exit(f"Commit Window Lab needs Python 3.11 or newer, not {sys.version.split()[0]}")
    sources = b"".join((ROOT / name).read_bytes() for name in ("environment.yml", "pyproject.toml"))
    stamp = VENV / f".set-up-{hashlib.sha256(sources).hexdigest()[:16]}"
    if stamp.exists():
        return
    print("Setting up .venv from environment.yml ...", flush=True)
    if not (BIN / "python").exists():
        venv.create(VENV, with_pip=True)
    packages = pinned_packages()
    uv = next(p for p in packages if p.startswith("uv=="))
    run(BIN / "python", "-m", "pip", "install", "--quiet", uv)
    # Bytecode compiled now, once: where PYTHONDONTWRITEBYTECODE is set (as on some CI
    # machines), every start would otherwise recompile LangGraph (about 2 s more per import).
    run(
        BIN / "uv",
        "pip",
        "install",
        "--quiet",
        "--compile-bytecode",
        "--python",
        BIN / "python",
        *packages,
    )
    # compat mode: a plain path entry, so that every interpreter start stays fast
    run(BIN / "uv", "pip", "install", "--quiet", "--python", BIN / "python", "--no-deps",
        "--config-settings", "editable_mode=compat", "-e", ROOT)  # fmt: skip
    run(BIN / "python", "-m", "compileall", "-q", ROOT / "labkit")
    for old in VENV.glob(".set-up-*"):
        old.unlink()
    stamp.touch()


def run(*command: object) -> None:
    subprocess.run([str(part) for part in command], cwd=ROOT, check=True)


def lab(extra: list[str]) -> None:
    root_flag = ["--allow-root"] if os.geteuid() == 0 else []
    start = [str(BIN / "jupyter"), "lab", "notebooks/00_start_here.ipynb", *root_flag, *extra]
    os.execv(start[0], start)


def test(extra: list[str]) -> None:
    # argv[0] must be the venv's own path: Python finds its environment from it
    command = [str(BIN / "python"), "-m", "pytest", *extra]
    os.execv(command[0], command)


def main() -> None:
    commands = {"lab": lab, "test": test, "binder": binder}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(f"usage: python3 tasks.py {{{'|'.join(commands)}}} [extra arguments]")
    os.chdir(ROOT)
    if sys.argv[1] != "binder":  # that one only writes two files
        set_up()
    commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
