"""The judges of the exercises whose answer is code: a step (lesson 2), a key (lesson 3).

Each runs the reader's code where the lab runs its own, and crosses the boundary the lesson is
about: a step is killed after every commit that reached a file, however it was written; a key
is computed again after a real restart (a new interpreter: another pid, parent pid, hash seed
and clock). They read the workers' own reports (exit codes, stderr, the files), so an error in
the reader's code shows as that error, at their line.
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

from labkit import key_probe
from labkit.checks import ReaderCodeError, Verdict, code_error, source_of
from labkit.launcher import WorkerReport
from labkit.snapshot import Snapshot
from labkit.stores import PAYLOAD
from labkit.worker import EXIT_CODE, LEARNER_FILE

__all__ = ["judge_operation_key", "judge_step"]

READER_FRAME = re.compile(rf'File "{re.escape(LEARNER_FILE)}", line (\d+)')


def raised(worker: WorkerReport, source: str) -> str | None:
    """The reader's error if this worker died of it (its traceback's last line, their line)."""
    if worker.exit_code in (0, EXIT_CODE, -signal.SIGKILL) and not worker.timed_out:
        return None
    if worker.timed_out:
        return f"the {worker.role} worker did not finish in time (an endless loop?)"
    lines = worker.stderr.strip().splitlines() or [f"exit status {worker.exit_code}"]
    frames = READER_FRAME.findall(worker.stderr)
    return code_error(lines[-1], int(frames[-1]) if frames else None, source)


def files_held(snapshot: Snapshot) -> str:
    """done and the receipts, and the word the lessons use for such a state."""
    done, receipts = snapshot.done, snapshot.receipts
    word = (
        "a duplicate"
        if receipts > 1
        else "unfinished"
        if done != 1
        else "consistent"
        if receipts == 1
        else "lost"
    )
    return f"done={done} and {receipts} receipt{'s' * (receipts != 1)} ({word})"


def judge_step(answer: Callable | str) -> Verdict:
    """Run the step once uncrashed, then kill it at every point its run passed (after every
    commit that reached a file) and recover: every run must end with done=1 and one receipt."""
    from labkit.runs import execute
    from labkit.spec import RunSpec
    from labkit.trace import read_trace

    source, name = source_of(answer)

    def run(point: str = "none"):  # noqa: ANN202 - a RunResult
        return execute(RunSpec("idempotent", point, step_source=source, step_name=name))

    clean = run()
    error = raised(clean.first, source)
    if error:
        raise ReaderCodeError(error, str(clean.run_dir))
    receipts = clean.before.table("receipts").rows
    if (clean.before.done, len(receipts)) != (1, 1) or receipts[0][2] != PAYLOAD:
        return Verdict(
            "incorrect",
            f"run once without a crash, the step left {files_held(clean.before)}, "
            f"receipts {receipts}: it must save one receipt of PAYLOAD and done=1",
            str(clean.run_dir),
        )
    trace = read_trace(clean.run_dir)
    points = [e["point"] for e in trace if e["event"] == "point" and e["role"] == "first"]
    for point in points:
        r = run(point)
        at = f"killed at `{point}`, when the files held {files_held(r.before)}"
        if r.first.exit_code != EXIT_CODE:
            why = raised(r.first, source) or "it did not reach that point this time"
            return Verdict("incorrect", f"{at}: {why}; a step must commit the same way every run")
        error = raised(r.recovery, source)
        if error:
            return Verdict(
                "incorrect",
                f"{at}, the recovery failed: {error}. A retry must get the receipt back, "
                "not an error",
                str(r.run_dir),
            )
        if (r.after.done, r.after.receipts) != (1, 1):
            return Verdict(
                "incorrect",
                f"{at}, recovery left {files_held(r.after)}: your step is not safe to replay",
                str(r.run_dir),
            )
    return Verdict(
        "correct",
        f"done=1 and one receipt after a kill at every one of the {len(points)} points your "
        f"step passed: {', '.join(points)}",
        str(clean.run_dir),
    )


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
    from labkit.interrupts import run_interrupt

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
