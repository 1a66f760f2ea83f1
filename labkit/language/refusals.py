"""A refusal (a LabError with a code) in the reader's language: the command line's error line
and a panel's error line say the same words, from the catalogue's cli.error.<code>."""

from __future__ import annotations

from labkit.bench.errors import LabError, RunFailed, worded
from labkit.language import catalogue, language, say
from labkit.language.failures import run_failed_text

__all__ = ["error_line"]


def error_line(error: LabError | RunFailed) -> str:
    """A bad input's one line in the reader's language: a LabError with a code is said from the
    catalogue (its `what`, `who` and `expected`, "write order", "worker", "outbox_results",
    in the catalogue's words for them when it has some: errors.worded); one without a code
    keeps its English text. A RunFailed with a code is said the same way (its failure's words).
    """
    if error.code is None:
        return str(error)
    if isinstance(error, RunFailed):  # the parent's failure, and its run folder
        return run_failed_text(error)
    fields = worded(error.fields, catalogue(language()))
    code = f"{error.code}_of" if fields.get("of") else error.code
    return say(f"cli.error.{code}", **fields)
