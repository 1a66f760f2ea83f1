"""A helper module beside the step that imports it (sibling_import.py)."""

from labkit.studies.commit_window.stores import KEY


def operation_key() -> str:
    return f"{KEY}:report"
