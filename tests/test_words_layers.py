"""Words flow one way (issue 27): a study returns codes and fields, a view says them. No module
of `labkit.studies` says a word (`say`) or imports a view; the one way back is the explorer's
documented `found.summary()` and `found.matrix()`, which hand the exploration to its view."""

from __future__ import annotations

import ast
from pathlib import Path

import labkit

STUDIES = Path(labkit.__file__).parent / "studies"
# (module, function): the methods a reader calls on an exploration, each a view's delegate
BACK_TO_THE_VIEW = {("explorer/report.py", "matrix"), ("explorer/report.py", "summary")}


def word_edges(path: Path) -> list[str]:
    """Where a study module says a word or imports a view: "file:line what"."""
    tree = ast.parse(path.read_text())
    name = path.relative_to(STUDIES).as_posix()
    allowed = {
        line
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and (name, node.name) in BACK_TO_THE_VIEW
        for line in range(node.lineno, node.end_lineno + 1)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            said = node.module == "labkit.language" and "say" in [a.name for a in node.names]
            if said or node.module.startswith("labkit.views"):
                found.append(f"{name}:{node.lineno} from {node.module} import ...")
        elif isinstance(node, ast.Import) and any(
            a.name.startswith("labkit.views") for a in node.names
        ):
            found.append(f"{name}:{node.lineno} import labkit.views...")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "say":
            found.append(f"{name}:{node.lineno} say(...)")
    return [edge for edge in found if int(edge.split(":")[1].split()[0]) not in allowed]


def test_no_study_says_a_word_or_imports_a_view():
    edges = [edge for path in sorted(STUDIES.rglob("*.py")) for edge in word_edges(path)]
    assert edges == []


def test_the_explorers_summary_is_its_views():
    from labkit.studies.explorer.report import Exploration
    from labkit.views.explorer_words import matrix_text, summary_text

    found = Exploration("t", "step", "/tmp/x", crash_points=0, crash_states=0)
    assert found.summary() == summary_text(found) and found.matrix() == matrix_text(found)
