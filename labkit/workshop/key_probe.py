"""Run a reader's `operation_key(state)` as a restarted server would: in a new interpreter.

Run as a script (`python -P -S key_probe.py`, never imported by the kernel), it reads
{"source", "name", "requests", "restarts"} as JSON on stdin and prints what the function
returned for each request: a key's repr, or the reader's error with its line. With restarts
left, it first starts the next copy of itself, a day later by its clocks, with another hash
seed: so every copy has its own pid, parent pid, hash seed and time, as after a real restart.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import subprocess
import sys
import time
import traceback

__all__ = ["LATER", "READER_FILE", "probe"]

READER_FILE = "<your operation_key>"  # the reader's code in a traceback
LATER = 86_400 + 3_600  # seconds: each restart happens a day and an hour after the one before


def move_clocks(seconds: float) -> None:
    """Every clock a key could be read from runs `seconds` ahead in this interpreter."""
    for name in ("time", "monotonic", "perf_counter"):
        real = getattr(time, name)
        setattr(time, name, lambda real=real: real() + seconds)
        real_ns = getattr(time, f"{name}_ns")
        setattr(time, f"{name}_ns", lambda real_ns=real_ns: real_ns() + int(seconds * 1e9))
    delta = datetime.timedelta(seconds=seconds)

    class Later(datetime.datetime):
        @classmethod
        def now(cls, tz=None):  # noqa: ANN001, ANN206 - the signature of datetime.now
            return super().now(tz) + delta

        @classmethod
        def utcnow(cls):  # noqa: ANN206
            return super().utcnow() + delta

        @classmethod
        def today(cls):  # noqa: ANN206
            return cls.now()

    class LaterDate(datetime.date):
        @classmethod
        def today(cls):  # noqa: ANN206
            return Later.now().date()

    datetime.datetime, datetime.date = Later, LaterDate


def keys_here(job: dict) -> list[str]:
    """The reader's function on every request (each a new dict, all kept alive at once)."""
    namespace: dict = {}
    requests = [dict(request) for request in job["requests"]]
    with contextlib.redirect_stdout(sys.stderr):  # a reader's print() must not garble the answer
        exec(compile(job["source"], READER_FILE, "exec"), namespace)
        return [repr(namespace[job["name"]](request)) for request in requests]


def reader_error(error: BaseException) -> dict:
    """The reader's error in a few words, and the line of their code it came from."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == READER_FILE]
    lines = traceback.format_exception_only(type(error), error)
    return {"error": lines[-1].strip(), "line": frames[-1].lineno if frames else None}


def probe(job: dict) -> list[dict]:
    """This interpreter's answer, after those of the restarted ones it started."""
    later: list[dict] = []
    if job["restarts"] > 0:
        env = {"PYTHONHASHSEED": str(int(os.environ.get("PYTHONHASHSEED", "0")) + 1)}
        done = subprocess.run(
            [sys.executable, "-P", "-S", os.path.abspath(__file__)],
            input=json.dumps({**job, "restarts": job["restarts"] - 1, "clock": job["clock"] + 1}),
            capture_output=True,
            text=True,
            env=env,
        )
        later = json.loads(done.stdout) if done.returncode == 0 else [{"error": done.stderr}]
    move_clocks(job["clock"] * LATER)
    here = {"pid": os.getpid(), "ppid": os.getppid(), "hash_seed": os.environ["PYTHONHASHSEED"]}
    try:
        here["keys"] = keys_here(job)
    except Exception as error:  # the reader's code: shown to them, never a crash of the lab
        here.update(reader_error(error))
    return [here, *later]


if __name__ == "__main__":
    print(json.dumps(probe({"clock": 0, **json.loads(sys.stdin.read())})))
