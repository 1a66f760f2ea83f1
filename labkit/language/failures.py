"""Why a run claims no outcome, in the reader's language: a failure is a code and fields
(bench/failures.py), said here from the catalogue's failure.<code> when a view shows it, never
stored as a sentence. The worker's or the system's own error stays its own words, quoted."""

from __future__ import annotations

import re
from collections.abc import Mapping

from labkit.bench.errors import RunFailed
from labkit.bench.own_names import refused_as_labs_own
from labkit.language import catalogue, language
from labkit.language.spacing import fill

__all__ = ["error_text", "failure_text", "run_failed_text", "worker_name"]

YOURS = re.compile(r"<your (\w+)>")  # the name a traceback gives the reader's code


def chosen(messages: Mapping[str, str] | None) -> Mapping[str, str]:
    """The catalogue to say a failure in: `messages` if given, else the reader's language's."""
    return messages if messages is not None else catalogue(language())


def failure_text(failure: Mapping | str, messages: Mapping[str, str] | None = None) -> str:
    """`failure` said in `messages` (the chosen language's catalogue unless given). A string
    is said as it is: a line a reader's own code or an outside tool wrote."""
    if isinstance(failure, str):
        return failure
    said = chosen(messages)
    fields = {k: v for k, v in failure.items() if k not in ("code", "role")}
    if "error" in fields and failure["code"] not in ("no_room", "parent_error"):
        fields["error"] = error_text(fields, said)
    if failure.get("role") is not None:
        fields["worker"] = worker_name(failure["role"], said)
    key = f"failure.{failure['code']}" + (
        "_at" if failure["code"] == "no_room" and fields.get("file") else ""
    )
    return fill(said[key], fields)


def worker_name(role: str, messages: Mapping[str, str] | None = None) -> str:
    """A worker by its role ("first worker", 首个 worker 进程); a role with no word of its own
    by its name ("w1 worker")."""
    said = chosen(messages)
    return said.get(f"failure.worker.{role}") or fill(said["failure.worker.named"], {"role": role})


def error_text(error: Mapping, messages: Mapping[str, str] | None = None) -> str:
    """A worker's own error (bench.failures.error_fields: its last line, and the reader's file
    and line it came from), quoted; or that it said nothing."""
    said = chosen(messages)
    key = "none" if error["error"] is None else "at" if error.get("file") else "said"
    yours = YOURS.fullmatch(str(error.get("file")))  # the reader's code, by the lab's name
    if yours and f"failure.yours.{yours[1]}" in said:
        error = {**error, "file": said[f"failure.yours.{yours[1]}"]}
    quoted = fill(said[f"failure.error.{key}"], error)
    if refused_as_labs_own(str(error["error"])):  # the lab's refusal says why, in words
        return f"{quoted} ({said['failure.error.labs_own']})"
    return quoted


def run_failed_text(error: RunFailed, messages: Mapping[str, str] | None = None) -> str:
    """A RunFailed said by its code (failure.run_failed: the parent could not go on;
    failure.code_failed: the reader's code failed), with its failure and its run folder."""
    said = chosen(messages)
    why = failure_text(error.fields["failure"], said)
    return fill(said[f"failure.{error.code}"], {"why": why, "run_dir": error.fields["run_dir"]})
