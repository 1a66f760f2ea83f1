"""Which modules are installed ones (the standard library's, site-packages'), as opposed to
the reader's own or labkit's: a traceback names the reader's line by it (`spares`), and a
recording names the installed modules it imported (`newly_imported`, for `bench.preload`).
Worker-side: standard library only, as a fresh worker starts with it."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

__all__ = ["STDLIB", "installed", "newly_imported"]

STDLIB = os.path.dirname(os.__file__) + os.sep


def installed(file: str) -> bool:
    """Whether `file` is of an installed module: the standard library's, or site-packages'."""
    folders = file.split(os.sep)
    return "site-packages" in folders or "dist-packages" in folders or file.startswith(STDLIB)


def newly_imported(before: Iterable[str]) -> list[str]:
    """The installed modules this process imported since `before` (its modules at its start),
    in the order they were first imported (a namespace package, with no file, is left out)."""
    known = set(before)
    return [
        name
        for name, module in list(sys.modules.items())
        if name not in known and installed(getattr(module, "__file__", None) or "<")
    ]
