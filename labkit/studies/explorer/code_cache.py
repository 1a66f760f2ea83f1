"""The reader's module compiled once an exploration, not once a worker.

Every worker of an exploration (the recording, each run to a crash point, each restart's
recovery: a hundred for a small graph) loads the reader's module afresh, and Python compiles
it afresh each time: no bytecode file is written beside the reader's code (their folder stays
as they left it), nor where PYTHONDONTWRITEBYTECODE forbids it. The first worker keeps the
compiled code in the exploration's folder, keyed by the source's bytes and its path, and the
others read it: the same code, as long as the file is the same. Its files are written with
the functions bound as this module is imported, before any watch of the worker's wraps them:
the lab's own writes are no write of the reader's. Worker-side: standard library.
"""

from __future__ import annotations

import hashlib
import marshal
import os

from labkit.bench.own_names import LABS_OWN

__all__ = ["compiled", "use_cache"]

# bound before the watches wrap them (`watches`, `renames`): the worker imports this first
OPEN, WRITE, CLOSE, REPLACE, MAKEDIRS = os.open, os.write, os.close, os.replace, os.makedirs
FOLDER = LABS_OWN + "code"  # in the exploration's folder, beside its run folders: no run's state
where: str | None = None  # this worker's cache folder (`use_cache`), or None: compile


def use_cache(exploration: str | None) -> None:
    """This worker's cache: the exploration's folder's (None: every load compiles)."""
    global where
    where = os.path.join(exploration, FOLDER) if exploration else None


def compiled(source: bytes | str, filename: str) -> object:
    """`compile(source, filename, "exec")`, as an import compiles a module, read from the
    cache where a worker of this exploration compiled the same source already."""
    data = source.encode() if isinstance(source, str) else source
    if where is None:
        return compile(data, filename, "exec", dont_inherit=True)
    key = hashlib.sha256(filename.encode() + b"\0" + data).hexdigest()[:32]
    path = os.path.join(where, key)
    try:
        with open(path, "rb") as kept:
            return marshal.loads(kept.read())
    except (OSError, EOFError, ValueError, TypeError):  # not kept yet (or cut short)
        pass
    code = compile(data, filename, "exec", dont_inherit=True)
    MAKEDIRS(where, exist_ok=True)
    partial = f"{path}.{os.getpid()}"
    kept = OPEN(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        left = memoryview(marshal.dumps(code))
        while left:
            left = left[WRITE(kept, left) :]
    finally:
        CLOSE(kept)
    REPLACE(partial, path)  # whole or not at all: another worker may read it now
    return code
