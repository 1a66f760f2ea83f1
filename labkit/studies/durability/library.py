"""What the installed LangGraph itself says about durability, read at run time, not copied: the
`Durability` literal (langgraph/types.py), the default a run gets when none is given (read
from the source of `Pregel._defaults`, which `stream` and `invoke` call), and the three
one-line definitions in `Pregel.invoke`'s docstring. Study 004 quoted them from langgraph
1.2.18 (types.py line 98, pregel/main.py line 2696); line numbers move between versions, so
they are looked up.

Read in the trial server, which has LangGraph imported already; the kernel never imports it.
"""

from __future__ import annotations

from labkit.bench.started import Progress, call_in_steps

__all__ = ["durability_in_library"]

MODES = ("sync", "async", "exit")


def where(function: object, needle: str) -> dict:
    """The first source line of `function` holding `needle`: the file (from the site-packages
    folder on), its line number and its text."""
    import inspect

    lines, start = inspect.getsourcelines(function)
    path = inspect.getsourcefile(function)
    at = next(i for i, line in enumerate(lines) if needle in line)
    return {
        "file": path[path.rindex("langgraph/") :],
        "line": max(start, 1) + at,  # a module's lines start at 0, a function's at its def
        "text": lines[at].strip(),
    }


def read_here() -> dict:
    """In the trial server: the literal, the default and the docstring's three definitions."""
    import importlib.metadata
    import typing

    import langgraph.types
    from langgraph.pregel import Pregel

    definitions = {}
    for line in (Pregel.invoke.__doc__ or "").splitlines():
        for mode in MODES:
            if line.strip().startswith((f'- `"{mode}"`:', f'- "{mode}":')):
                definitions[mode] = line.strip()[2:]
    return {
        "version": importlib.metadata.version("langgraph"),
        "literal": typing.get_args(langgraph.types.Durability),
        "literal_at": where(langgraph.types, "Durability = Literal["),
        "default_at": where(Pregel._defaults, "CONFIG_KEY_DURABILITY, "),
        "definitions": definitions,
        "definitions_in": "Pregel.invoke.__doc__",
    }


def durability_in_library(progress: Progress | None = None) -> dict:
    """The installed LangGraph's durability literal, default and definitions, and where each is.
    Often a lesson's first call, which starts the trial server: `progress` hears of it in steps
    (`bench.started.call_in_steps`)."""
    facts = call_in_steps("labkit.studies.durability.library:read_here", progress)
    facts["literal"] = tuple(facts["literal"])
    facts["default"] = next(m for m in MODES if f'"{m}")' in facts["default_at"]["text"])
    return facts
