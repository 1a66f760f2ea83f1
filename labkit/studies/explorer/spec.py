"""What an exploration is asked to do, checked before anything runs: the reader's target
and checker, its kind, the durability mode, the kill mode, the restarts, how interrupts are
answered, a graph's config, a Postgres server, the files that are no effect, the files its
code reads and the programs it starts that are harmless. Each bad value is one line (a
LabError) that names the valid choices, in the API and the CLI alike.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from labkit.bench.errors import (
    MAX_TIMEOUT,
    check_choice,
    check_choices,
    check_number,
    refusal,
)
from labkit.bench.restart import RESTARTS
from labkit.studies.explorer.record import KILL_MODES
from labkit.studies.explorer.steps import FILES
from labkit.studies.explorer.target import KINDS
from labkit.studies.explorer.with_files import check_with_files

__all__ = ["DURABILITY_MODES", "RESTARTS_BY_KIND", "ExploreSpec"]

DURABILITY_MODES = ("sync", "async", "exit")
# Each crash state is recovered after every restart the spec names (`bench.restart`), each on a
# copy of what the kill left; a graph's new hash seed costs an interpreter that imports
# LangGraph (about 1.5 s a state), so only a step's exploration takes it unless asked.
RESTARTS_BY_KIND = {"step": RESTARTS, "graph": RESTARTS[:-1], "callable": RESTARTS[:-1]}


@dataclass(frozen=True)
class ExploreSpec:
    """What to explore and how; every value checked here, in one line, before anything runs."""

    target: dict  # name_target's answer: the reader's module (or file, or source) and name
    kind: str = "step"
    checker: dict | None = None  # the same for a checker; None: the default checker
    durability: str = "sync"  # a graph's
    files: str = "two"  # a step's: control.db and effect.db, or "one" file for both
    kill_mode: str = "sigkill"
    timeout: float = 30.0  # per worker
    restarts: tuple[str, ...] | None = None  # when recoveries come (None: the kind's own)
    resume: object = None  # a graph's answer to every interrupt (None: True), JSON
    resume_by: dict | None = None  # or a function of the interrupt's payload (name_target's)
    resumes: list | None = None  # or answers in order: the n-th interrupt gets the n-th, JSON
    config: dict | None = None  # a graph's config for invoke (its configurable values), JSON
    postgres: str | None = None  # a server for the nodes' rows ("lab": labkit's own), a URL
    ignore_files: tuple[str, ...] = ()  # patterns of files that are no effect (logs): not judged
    with_files: tuple[str, ...] = ()  # files the code reads by a relative path: in every run
    harmless_programs: tuple[str, ...] = ()  # programs it starts that reach nothing outside

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, KINDS)
        check_choice("durability mode", self.durability, DURABILITY_MODES)
        check_choice("files", self.files, tuple(FILES))
        check_choice("kill mode", self.kill_mode, KILL_MODES)
        object.__setattr__(self, "timeout", check_number("timeout", self.timeout, 0, MAX_TIMEOUT))
        restarts = RESTARTS_BY_KIND[self.kind] if self.restarts is None else self.restarts
        object.__setattr__(self, "restarts", check_restarts(restarts))
        if isinstance(self.resumes, tuple):
            object.__setattr__(self, "resumes", list(self.resumes))
        check_resume(self.resume, self.resume_by, self.resumes)
        check_config(self.config)
        check_postgres(self.postgres, self.kind)
        check_step_options(self)
        object.__setattr__(self, "ignore_files", check_ignore_files(self.ignore_files))
        object.__setattr__(self, "with_files", check_with_files(self.with_files))
        harmless = check_harmless_programs(self.harmless_programs)
        object.__setattr__(self, "harmless_programs", harmless)

    def job(self, **fields: object) -> dict:
        return {**asdict(self), **fields}

    def replay_job(
        self, clean: dict, temporaries: list[str], no_effects: list[str], **fields: object
    ) -> dict:
        """A job that runs the recorded code again and judges it against the recording
        (`Exploration.truth`): the state its run without a crash left, its temporaries, and
        the files no checker sees, the reader's `ignore_files` and `no_effects` (patterns: a
        called service's bookkeeping, LangGraph's node caches)."""
        return self.job(
            clean=clean,
            temporaries=temporaries,
            ignore_files=[*self.ignore_files, *no_effects],
            **fields,
        )


def check_restarts(restarts: object) -> tuple[str, ...]:
    """The restarts to recover after, in `RESTARTS`' order: a list of their names, or one text
    of them with commas between ("now,month"), as `--restart-at` takes them."""
    if isinstance(restarts, str):
        restarts = [name.strip() for name in restarts.split(",")]
    picked = set(check_choices("restart", restarts, RESTARTS))
    return tuple(name for name in RESTARTS if name in picked)


def check_resume(resume: object, resume_by: dict | None, resumes: object = None) -> None:
    """One way to answer interrupts, and values that can travel to the workers (JSON)."""
    if sum(way is not None for way in (resume, resume_by, resumes)) > 1:
        raise refusal("explore_resume_ways")
    if resumes is not None and (not isinstance(resumes, list) or not resumes):
        raise refusal("explore_resumes_list", value=repr(resumes))
    for code, given in (
        ("resume", resume),
        *(("resumes", a) for a in resumes or ()),
    ):  # of the codes:
        try:
            json.dumps(given)
        except (TypeError, ValueError):
            kind = type(given).__name__
            raise refusal(f"explore_{code}_json", kind=kind) from None


def check_step_options(spec: ExploreSpec) -> None:
    """A step answers no interrupts and takes no config or durability mode: a value given for
    one would be left unread, and the reader think it counted."""
    if spec.kind != "step":
        return
    given = {
        "resume": spec.resume is not None,
        "resume_by": spec.resume_by is not None,
        "resumes": spec.resumes is not None,
        "config": spec.config is not None,
        "durability": spec.durability != ExploreSpec.durability,
    }
    unread = [option for option, was_given in given.items() if was_given]
    if unread:
        raise refusal("explore_step_options", options=", ".join(unread))


def check_ignore_files(patterns: object) -> tuple[str, ...]:
    """Patterns of the files a checker never sees (`fnmatch`'s, matched against a file's path
    in the run folder: "*.log" matches agent.log and logs/app.log), or, absolute, of files
    outside it whose writes are no write outside (each run writes there again: a log under
    /var/log, matched against its real path): one, or a list of them."""
    given = [patterns] if isinstance(patterns, str) else patterns
    if not isinstance(given, (list, tuple)) or not all(
        isinstance(p, str) and p.strip("/") and ".." not in p.split("/") for p in given
    ):
        raise refusal("explore_ignore_files", value=repr(patterns))
    return tuple(given)


def check_harmless_programs(names: object) -> tuple[str, ...]:
    """The programs the reader's code starts that reach nothing outside the run folder, by
    name as the explorer notes them ("sh" for a command line, "convert" for
    /usr/bin/convert): one, or a list of them. A path would never match a name."""
    given = [names] if isinstance(names, str) else names
    if not isinstance(given, (list, tuple)) or not all(
        isinstance(name, str) and name.split() == [name] and "/" not in name for name in given
    ):
        raise refusal("explore_harmless_programs", value=repr(names))
    return tuple(given)


def check_postgres(postgres: object, kind: str) -> None:
    """A server for a graph's or a callable's rows: "lab" (labkit's own) or a URL."""
    if postgres is None:
        return
    if kind == "step":
        raise refusal("explore_postgres_step")
    if postgres != "lab" and not str(postgres).startswith(("postgresql://", "postgres://")):
        from labkit.bench.postgres import redacted  # a password in it is not repeated

        raise refusal("explore_postgres_url", value=repr(redacted(str(postgres))))


def check_config(config: object) -> None:
    """A graph's config: None, or a JSON dict whose `configurable`, if given, is a dict."""
    if config is None:
        return
    if not isinstance(config, dict) or not isinstance(config.get("configurable", {}), dict):
        raise refusal("explore_config_dict", value=repr(config))
    try:
        json.dumps(config)
    except (TypeError, ValueError):
        raise refusal("explore_config_json", value=repr(config)) from None
