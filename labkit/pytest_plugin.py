"""The crash explorer in a project's own tests: pytest loads this plugin through labkit's
`pytest11` entry point, once labkit is installed (`pip install labkit`, no lesson extras).

    def test_refunds_survive_every_crash(crash_explorer):
        found = crash_explorer("shop.refunds:graph", kind="graph", resume={"action": "approve"})
        assert found.green, found.matrix()

    @pytest.mark.crash_explore("shop.refunds:graph", kind="graph", resume={"action": "approve"})
    def test_refunds_matrix_is_green():
        pass

A target names a module by import path, as the project's tests import it: the folder pytest
runs from (its rootdir) goes first on the explorer's workers' import path, so the module's
own imports of its package work. One trial server serves the whole session. A failing
matrix fails the test with every failing crash point: the project's source line, the
outcome word, and the run folder to open, in the language LABKIT_LANGUAGE names, as the
command line says them. Nothing of the explorer is imported until a test asks for it: pytest
starts as fast with the plugin as without it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["CrashExplorer", "crash_explorer"]

MARKER = "crash_explore"


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("LABKIT_LANGUAGE"):  # the plugin's lines follow it, as the CLI's do
        from labkit.bench.errors import LabError
        from labkit.language import language

        try:
            language()
        except LabError as error:  # no language to say it in: English, one line
            raise pytest.UsageError(str(error)) from None
    config.addinivalue_line(
        "markers",
        f"{MARKER}(target, **options): fail the test unless the crash explorer finds every "
        "crash point of target ('package.module:name') consistent; options as crash_explorer's",
    )


class CrashExplorer:
    """`crash_explorer(target, kind=..., **options)`: an exploration (`labkit.explore`'s
    options: checker, resume, resume_by, resumes, config, durability, restart_at, timeout,
    postgres, ignore_files, with_files, harmless_programs), whose `matrix()` is the table to
    put in an assertion's message."""

    def __init__(self, rootdir: Path, out: Path) -> None:
        self.rootdir, self.out, self.count = rootdir, out, 0

    def __call__(self, target: str, kind: str = "graph", **options: object) -> object:
        from labkit.studies.explorer.replay import explore

        self.count += 1
        options.setdefault("path", self.rootdir)
        options.setdefault("out", self.out / f"exploration-{self.count}")
        return explore(target, kind, **options)


@pytest.fixture
def crash_explorer(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CrashExplorer]:
    """Explore a target of this project; each exploration's folder is in the test's tmp_path."""
    yield CrashExplorer(request.config.rootpath, tmp_path)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A test marked `crash_explore` fails with the matrix unless every crash point holds."""
    marker = item.get_closest_marker(MARKER)
    if marker is not None:
        fail_unless_green(item, marker)
    yield


def fail_unless_green(item: pytest.Item, marker: pytest.Mark) -> None:
    from labkit.bench.errors import LabError
    from labkit.language import say
    from labkit.language.refusals import error_line

    if len(marker.args) != 1:
        raise pytest.UsageError(say("pytest.one_target", nodeid=item.nodeid, marker=MARKER))
    out = item.config._tmp_path_factory.mktemp("crash-explore")  # noqa: SLF001 - pytest's own
    try:
        found = CrashExplorer(item.config.rootpath, out)(*marker.args, **marker.kwargs)
    except LabError as error:  # bad input: one line, as the CLI says it
        pytest.fail(say("pytest.refused", marker=MARKER, error=error_line(error)), pytrace=False)
    if not found.green:
        pytest.fail(failing_rows(found), pytrace=False)


def failing_rows(found: object) -> str:
    """The failing crash points, one a line: number, what it came after, the project's own
    line, the outcome word, what is wrong, and the run folder; then the summary."""
    from labkit.language import say
    from labkit.views.explorer_words import crash_after, point_label, point_outcome, what_is_wrong

    lines = [
        say(
            "pytest.row",
            point=point_label(p),
            after=crash_after(p),
            where=p.where or say("pytest.nowhere"),
            outcome=point_outcome(p),
            wrong=what_is_wrong(p),
            run_dir=p.run_dir,
        )
        for p in found.failing
    ]
    return "\n".join([*lines, found.summary()])
