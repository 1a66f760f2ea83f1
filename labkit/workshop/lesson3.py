"""Lesson 3 · Interrupt and resume (notebooks/03_interrupt_and_resume.ipynb): its checked exercises.

A key is judged across a real restart: computed again in a new interpreter (another pid,
parent pid, hash seed and clock), then a real SIGKILL and a resume in a new process.

    lesson3.operation_key.check(operation_key)   # .hint(), .solution()
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from labkit.studies.interrupt_resume.experiment import run_interrupt
from labkit.workshop import key_probe
from labkit.workshop.checks import (
    WHOLE_NUMBER,
    Exercise,
    Measured,
    ReaderCodeError,
    Verdict,
    code_error,
    each,
    judge_predictions,
    source_of,
)

__all__ = ["operation_key", "predict_kills"]


def interrupt_case(point: str) -> Measured:
    """Tickets after a SIGKILL at `point` and a resume (fresh key, combined layout)."""

    r = run_interrupt("fresh", "combined", True, point)
    return Measured(r["after_resume"], f"receipts {r['receipts']}", r["run_dir"], r["failure"])


ONE = {"operation_id": "request-42/create-ticket/v1", "title": "Printer offline"}
OTHER = {"operation_id": "request-43/create-ticket/v1", "title": "Printer offline"}


def keys_after_restart(source: str, name: str, seconds: float = 30) -> list[dict]:
    """The key function on [ONE, ONE, OTHER] in two fresh interpreters, the second started
    by the first, a day later: [{pid, ppid, hash_seed, keys or error and line}, ...]."""
    job = {"source": source, "name": name, "requests": [ONE, ONE, OTHER], "restarts": 1}
    command = [sys.executable, "-P", "-S", key_probe.__file__]
    with subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PYTHONHASHSEED": "1"},
        cwd=Path(key_probe.__file__).parent,
        start_new_session=True,  # one process group: a timeout ends both interpreters
    ) as probe:
        try:
            out, err = probe.communicate(json.dumps(job), timeout=seconds)
        except subprocess.TimeoutExpired:
            os.killpg(probe.pid, signal.SIGKILL)
            probe.communicate()
            raise ReaderCodeError(
                f"your key function did not return within {seconds:.0f} s"
            ) from None
    if probe.returncode != 0:
        raise RuntimeError(f"the key probe failed: {err.strip()}")
    return json.loads(out)


def judge_operation_key(answer: Callable | str) -> Verdict:
    """Same request, same key: in one process and after a restart; another request, another
    key; then a real SIGKILL after the ticket was created and a resume in a new process."""

    source, name = source_of(answer)
    before, after = keys_after_restart(source, name)
    for process in (before, after):
        if "error" in process:
            raise ReaderCodeError(code_error(process["error"], process.get("line"), source))
    same, again, other = before["keys"]
    if same != again:
        return Verdict(
            "incorrect",
            f"the same request got two keys in one process ({same} and {again}): "
            "every resume would create a new ticket",
        )
    if after["keys"][0] != same:
        return Verdict(
            "incorrect",
            f"the same request got the key {same} before a restart and {after['keys'][0]} "
            f"after it (a new interpreter: pid {before['pid']} → {after['pid']}, parent "
            f"{before['ppid']} → {after['ppid']}, hash seed {before['hash_seed']} → "
            f"{after['hash_seed']}, a day later): the resumed node would create a second ticket",
        )
    if other == same:
        return Verdict(
            "incorrect",
            f"two different requests (request-42 and request-43, same title) both got {same}: "
            "the second would be merged into the first",
        )
    if not same.startswith(("'", '"')):
        return Verdict("incorrect", f"the key must be a string (text), not {same}")
    renamed = re.sub(rf"\bdef {re.escape(name)}\(", "def operation_key(", source, count=1)
    r = run_interrupt("custom", "combined", True, "after_create", key_source=renamed)
    if r["after_resume"] != 1:
        return Verdict(
            "incorrect",
            f"killed after the ticket was created, then resumed in a new process: "
            f"{r['after_resume']} tickets (receipts {r['receipts']})",
            r["run_dir"],
        )
    return Verdict(
        "correct",
        f"the same key {same} after a restart, another for another request, and one ticket "
        f"after a SIGKILL and a resume in a new process (receipts {r['receipts']})",
        r["run_dir"],
    )


operation_key = Exercise(
    "lesson3.operation_key",
    "03_operation_key.py",
    starter="""def operation_key(state):
    import uuid

    return str(uuid.uuid4())""",
    judge=judge_operation_key,
    code=True,
    hints=[
        "The check computes your key twice for one request, also after a real restart (a "
        "new interpreter: another pid, parent pid, hash seed and clock), and once for "
        "another request.",
        "So nothing from the process or the moment may go into it: no uuid4 or uuid1, no "
        "time, random, id(), hash() of a string, os.getpid() or os.getppid().",
        "What in the state was fixed per request before the first attempt, and differs "
        "between two requests with the same title?",
    ],
)

predict_kills = Exercise(
    "lesson3.predict_kills",
    "03_predict_kills.py",
    starter="""tickets_after = {
    "before_create": None,
    "after_create": None,
    "paused": None,
}""",
    judge=lambda predicted: judge_predictions(
        predicted, ("before_create", "after_create", "paused"), each(interrupt_case), WHOLE_NUMBER
    ),
    hints=[
        "Count the runs of the node that reach the ticket service: the killed process, a "
        "re-run up to the interrupt (if no interrupt was saved), the resume.",
        "With a fresh key every run that reaches the ticket service makes a new ticket; "
        "a process killed at before_create never reached it.",
        "At `paused` the interrupt was saved before the kill: only the resume runs the node again.",
    ],
)
