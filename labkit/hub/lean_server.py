"""A participant's Jupyter server under the workshop hub: `jupyterhub-singleuser` (Jupyter Server
with JupyterHub's single-user extension, JupyterHub ≥ 4's default) without four imports it
never uses, 34 MB of each server's private memory, measured:

- `alembic` (10 MB): JupyterHub's database migrations, imported by `jupyterhub.orm` for the
  hub's own `upgrade-db`; the extension imports `orm` for its scopes, never to migrate.
- `jupyterhub.handlers.pages` (2 MB, the hub's own pages): the extension's request log imports
  it for one `isinstance` test that no handler of a single-user server passes.
- `jupyterlab.extensions.pypi` (6 MB: httpx, rich): the extension manager that queries PyPI;
  the hub's servers run JupyterLab's read-only one (config.LEANER).
- `rfc3987_syntax` (16 MB with the `lark` grammar it builds at import): jsonschema's optional
  checker of the "iri" format, which no schema of Jupyter's events uses; jsonschema checks
  every other format without it, as it does wherever that package is not installed.

The first three are replaced by stand-in modules whose names import but refuse to be used: a
call says what was left out and where, instead of running without it. Everything else is
upstream's code, started as its own `jupyterhub-singleuser` starts it. As lean_kernel.py does
for the debugger, the hub's servers start this (config.py's Spawner.cmd).
"""

from __future__ import annotations

import sys
import types

LEFT_OUT = ("alembic", "alembic.command", "alembic.config", "alembic.script",
            "jupyterhub.handlers.pages", "jupyterlab.extensions.pypi")  # fmt: skip
ABSENT = ("rfc3987_syntax",)  # an optional import: None in sys.modules makes it an ImportError


class LeftOut(type):
    """A name of a left-out module: a class, so that it imports, subclasses and stands in
    `isinstance(x, A | B)` (never true); calling it says what was left out."""

    def __call__(cls, *args: object, **kwargs: object) -> None:
        raise RuntimeError(f"{cls.__qualname__} is left out of a workshop's Jupyter server "
                           "(labkit/hub/lean_server.py)")  # fmt: skip

    def __getattr__(cls, name: str) -> LeftOut:
        if name.startswith("__"):
            raise AttributeError(name)
        return LeftOut(name, (), {"__qualname__": f"{cls.__qualname__}.{name}"})


class LeftOutModule(types.ModuleType):
    def __getattr__(self, name: str) -> LeftOut:
        if name.startswith("__"):
            raise AttributeError(name)
        return LeftOut(name, (), {"__qualname__": f"{self.__name__}.{name}"})


def leave_out() -> None:
    """Put the stand-ins where Python looks first, before anything imports the real ones."""
    for name in LEFT_OUT:
        sys.modules.setdefault(name, LeftOutModule(name))
    for name in ABSENT:
        sys.modules.setdefault(name, None)


def main() -> None:
    leave_out()
    from jupyterhub.singleuser import main as singleuser

    sys.exit(singleuser())


if __name__ == "__main__":  # imported (every labkit module is, in a test), it does nothing
    main()
