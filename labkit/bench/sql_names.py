"""A SQLite table's name as SQL can say it, whatever the name: the one place names are quoted.
Worker-side: standard library only."""

from __future__ import annotations

__all__ = ["quoted"]


def quoted(name: str) -> str:
    """An SQL identifier for any table name, even one with a double quote in it."""
    return '"' + name.replace('"', '""') + '"'
