"""How an error crosses the trial server's pipe: as one line, "Name: message", which the
caller turns back into the exception it names (the caller's own errors) or a ServerError."""

from __future__ import annotations

import contextlib
import json

from labkit.bench.errors import CodeFailed, LabError, RunFailed

__all__ = ["CALLERS_ERRORS", "ServerError", "as_error", "error_message"]


class ServerError(RuntimeError):
    """A call failed inside the trial server; the message is the server's own error line."""


# Errors the server passes back as themselves (by name): the caller's bad input (LabError),
# a run that could not go on (RunFailed), the reader's code that failed in it (CodeFailed).
# Any other error is the server's: a ServerError.
CALLERS_ERRORS: dict[str, type[Exception]] = {
    "LabError": LabError,
    "RunFailed": RunFailed,
    "CodeFailed": CodeFailed,
}


def as_error(line: str, otherwise: str) -> Exception:
    """The exception an error line names ("LabError: output folder ... exists"), or a
    ServerError that says `otherwise` and then the line."""
    name, _, message = line.partition(": ")
    kind = CALLERS_ERRORS.get(name.rpartition(".")[2])  # a traceback names the module too
    return kind(message) if kind else ServerError(f"{otherwise}: {line}" if otherwise else line)


def error_message(error: Exception) -> dict:
    """An error as the caller gets it: a ServerError with this text, or the caller's own."""
    message = {"error": f"{type(error).__name__}: {error}"}
    if isinstance(error, LabError | RunFailed) and error.code:  # said in the caller's language
        with contextlib.suppress(TypeError, ValueError):  # fields JSON cannot carry: no
            message["said"] = json.loads(json.dumps([error.code, error.fields]))
    return message
