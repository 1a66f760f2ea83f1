"""The explorer's warm start (issue 26): the installed modules a reader's graph imports are
imported once in the server, after its recording, so that the replays' workers have them; a
module that starts a thread or fails as it loads is never imported where workers are forked."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from labkit.bench import server
from labkit.studies.explorer.replay import explore
from tests.conftest import run_python

OUTSIDE = Path(__file__).parent / "outside"
TOOL_NODE = "langgraph.prebuilt.tool_node"  # what update_tool.py brings that the server lacks


def recorded_imports(found) -> list[str]:
    return json.loads((Path(found.folder) / "record" / "record.json").read_text())["imported"]


def test_a_graphs_installed_imports_are_loaded_once_in_the_server(tmp_path):
    server.stop()  # a new server: an earlier test may have explored this graph already
    target = f"{OUTSIDE / 'update_tool'}.py:graph"
    first = explore(target, "graph", restart_at="now", out=tmp_path / "first")
    assert TOOL_NODE in recorded_imports(first)
    assert not any(name.startswith("update_tool") for name in recorded_imports(first))
    second = explore(target, "graph", restart_at="now", out=tmp_path / "second")
    assert TOOL_NODE not in recorded_imports(second)  # its workers found it in the server
    # the same matrix, warm or not
    assert [(p.n, p.outcome) for p in second.points] == [(p.n, p.outcome) for p in first.points]
    assert [p.outcome for p in first.failing] == ["inconsistent"], first.summary()


def test_a_module_that_starts_a_thread_or_fails_is_refused_and_a_kernel_imports_nothing(
    tmp_path,
):
    (tmp_path / "starts_a_thread.py").write_text(
        "import threading, time\nthreading.Thread(target=time.sleep, args=(5,)).start()\n"
    )
    (tmp_path / "fails.py").write_text("raise ImportError('no')\n")
    answers = run_python(
        f"""
        import json, sys
        sys.path.insert(0, {str(tmp_path)!r})
        from labkit.bench import launcher, preload
        cleanly = [preload.loads_cleanly([name]) for name in
                   ("starts_a_thread", "fails", "no_such_module", "xml.dom.minidom")]
        kernel = preload.preload(["xml.dom.minidom"])  # no forking here: nothing imported
        print(json.dumps([cleanly, kernel, "starts_a_thread" in sys.modules,
                          "xml.dom.minidom" in sys.modules]))
        """
    )
    assert answers == [[False, False, False, True], [], False, False]


def test_newly_imported_names_installed_modules_only(tmp_path):
    (tmp_path / "readers_own.py").write_text("import xml.dom.minidom\n")
    imported = run_python(
        textwrap.dedent(
            f"""
            import json, sys
            from labkit.bench.installed import newly_imported
            before = list(sys.modules)
            sys.path.insert(0, {str(tmp_path)!r})
            import readers_own
            print(json.dumps(newly_imported(before)))
            """
        )
    )
    assert "xml.dom.minidom" in imported and "readers_own" not in imported
