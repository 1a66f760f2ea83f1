"""Name what recovery left behind, in the words the lessons use.

A word is claimed only for a run whose workers did what the run planned: the first worker died
at the planned kill point (or ran to its end), the recovery ran to its end. Otherwise the run
is "failed", with the reason, and no outcome is claimed: the files show the worker's error,
not the commit window.
"""

from __future__ import annotations

import re
import signal

from labkit.bench.launcher import WorkerReport
from labkit.bench.snapshot import Snapshot

__all__ = [
    "FAILED",
    "OUTCOMES",
    "classify",
    "describe_state",
    "outcome_text",
    "state_word",
    "worker_failure",
]

FAILED = "failed"
OUTCOMES = {
    "consistent": "done=1 and one receipt: the effect happened once and the workflow knows it",
    "duplicate": "more than one receipt: recovery ran the business effect again",
    "lost": "done=1 but no receipt: the workflow says finished, the business never saw it",
    "unfinished": "done=0 after recovery: the workflow still has the step to do",
    FAILED: "a worker did not do what the run planned (an error or a timeout): no outcome",
}
FRAME = re.compile(r'^\s*File "([^"]*)", line (\d+)', re.MULTILINE)  # a traceback's frame


def error_line(stderr: str) -> str:
    """A worker's own error in one line: the traceback's last line, and the line of the reader's
    code it came from, if it did (exec'd code has a file name in <>, such as "<your step>";
    a traceback's first frame is the worker's own start, `python -c`'s "<string>")."""
    lines = stderr.strip().splitlines()
    if not lines:
        return "no error message"
    frames = FRAME.findall(stderr)
    readers = len(frames) > 1 and frames[-1][0].startswith("<")
    return lines[-1].strip() + (f" ({frames[-1][0]}, line {frames[-1][1]})" if readers else "")


def worker_failure(worker: WorkerReport, planned_kill: str | None = None) -> str | None:
    """Why `worker` did not do what was planned, or None if it did: it ran to its end (exit 0)
    or died at `planned_kill` (its own exit 91 there, or the parent's SIGKILL there)."""
    if worker.timed_out:
        return f"{worker.role} worker timed out after {worker.seconds:.3g} s"
    if worker.exit_code == 0 or (planned_kill is not None and worker.killed_at == planned_kill):
        return None
    code = worker.exit_code
    if code is not None and code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else -code
        return f"{worker.role} worker died of signal {name}: {error_line(worker.stderr)}"
    return f"{worker.role} worker exited {code}: {error_line(worker.stderr)}"


def state_word(snapshot: Snapshot) -> str:
    """The word for what the files hold: duplicate, unfinished, consistent or lost."""
    if snapshot.receipts > 1:
        return "duplicate"
    if snapshot.done != 1:
        return "unfinished"
    return "consistent" if snapshot.receipts == 1 else "lost"


def describe_state(snapshot: Snapshot) -> str:
    """done and the receipts, and the word for them: "done=1 and 2 receipts (duplicate)"."""
    receipts = f"{snapshot.receipts} receipt{'s' * (snapshot.receipts != 1)}"
    return f"done={snapshot.done} and {receipts} ({state_word(snapshot)})"


def classify(after: Snapshot, failure: str | None) -> str:
    """One word for the state after recovery (see OUTCOMES for what each word means)."""
    return FAILED if failure else state_word(after)


def outcome_text(outcome: str, failure: str | None) -> str:
    """The outcome word, and for a failed run why: "failed: first worker timed out after 0.5 s"."""
    return f"{outcome}: {failure}" if failure else outcome
