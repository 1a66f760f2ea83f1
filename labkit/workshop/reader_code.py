"""The reader's code as a judge sees it: its source and function name, whether it is the starter
untouched, and, when a worker that ran it died, whether their line raised (their error, at their
line) or the lab's own line after it (what the lab expects of their code)."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable, Iterable

from labkit.bench.launcher import WorkerReport
from labkit.bench.own_names import refused_as_labs_own
from labkit.language import say
from labkit.language.failures import worker_name
from labkit.workshop.verdicts import ReaderCodeError, UnmetExpectation

__all__ = [
    "check_worker",
    "code_error",
    "lab_line_raised",
    "normalized",
    "source_of",
    "worker_code_error",
    "worker_error",
]


def code_error(error: str, line: int | None, source: str) -> str:
    """The reader's error in one sentence, with the line of their code that raised it."""
    lines = source.splitlines()
    if line is None or not 0 < line <= len(lines):
        return say("checks.code.raised", error=error)
    return say("checks.code.raised_at", error=error, line=line, code=lines[line - 1].strip())


def worker_code_error(error: str, line: int | None, source: str) -> str:
    """`code_error` for code that ran in a worker, which runs only the function's own source:
    a NameError there is most likely a name defined outside the function (in another cell, or
    imported above it), and the note says so; so does the lab's refusal of a file of its own.
    (Not in `code_error` itself: lesson 3's gate runs in the kernel, where "the worker" would
    be wrong.)"""
    said = code_error(error, line, source)
    if error.startswith("NameError"):
        return f"{said} ({say('checks.code.own_source_only')})"
    if refused_as_labs_own(error):
        return f"{said} ({say('failure.error.labs_own')})"
    return said


def worker_error(
    worker: WorkerReport, source: str, reader_file: str, planned: Iterable[int] = (0,)
) -> str | None:
    """The reader's error if a worker that ran their code died of it (the traceback's last line,
    at their line), or None if it ended as `planned` (its exit status: 0, or a planned kill)."""
    if worker.exit_code in planned and not worker.timed_out:
        return None
    if worker.timed_out:
        return say("checks.code.timed_out", role=worker_name(worker.role))
    lines = worker.stderr.strip().splitlines() or [
        say("checks.code.exit_status", code=worker.exit_code)
    ]
    frames = re.findall(rf'File "{re.escape(reader_file)}", line (\d+)', worker.stderr)
    return worker_code_error(lines[-1], int(frames[-1]) if frames else None, source)


def lab_line_raised(worker: WorkerReport, reader_file: str) -> bool:
    """The worker died of a traceback with no frame of the reader's file: the lab's own line
    raised it, not theirs."""
    return "Traceback" in worker.stderr and f'File "{reader_file}"' not in worker.stderr


def check_worker(
    worker: WorkerReport,
    source: str,
    reader_file: str,
    run_dir: object,
    expects: str,
    planned: Iterable[int] = (0,),
) -> None:
    """Nothing if a worker that ran the reader's code ended as `planned`; else their error, at
    their line (ReaderCodeError), or, if the lab's own line raised, what the lab expects of
    their code (UnmetExpectation; `expects` is its catalogue key)."""
    error = worker_error(worker, source, reader_file, planned)
    if error is None:
        return
    if not worker.timed_out and lab_line_raised(worker, reader_file):  # a timeout is a timeout
        last = worker.stderr.strip().splitlines()[-1]
        said = say("checks.code.lab_expects", expects=say(expects), error=last)
        raise UnmetExpectation(said, str(run_dir))
    raise ReaderCodeError(error, str(run_dir))


def normalized(source: str) -> str:
    """Code without comments, blank lines or indentation differences, to spot untouched starters."""
    lines = (line.split("#")[0].rstrip() for line in textwrap.dedent(source).splitlines())
    return "\n".join(line for line in lines if line.strip())


def source_of(answer: Callable | str) -> tuple[str, str]:
    """(source, function name) of a function, or of the first function in a source string."""
    try:
        source = textwrap.dedent(answer if isinstance(answer, str) else inspect.getsource(answer))
        tree = ast.parse(source)
    except SyntaxError as error:
        raise ReaderCodeError(
            code_error(f"SyntaxError: {error.msg}", error.lineno, source)
        ) from None
    except (OSError, TypeError) as error:
        raise ReaderCodeError(say("checks.code.needs_a_cell", error=error)) from None
    names = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    if not names:
        raise ReaderCodeError(say("checks.code.needs_a_function"))
    return source, names[0]
