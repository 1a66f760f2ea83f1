"""Every bad input is said in the reader's language (issue 27, item 9): a LabError carries a
code, and the command line says `cli.error.<code>` from the catalogue with its fields. This test
reads labkit's source for LabErrors raised without a code, so none comes back, and checks each
code has its words in both catalogues; then one refusal of each kind, said in Chinese."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from labkit.language import catalogue

ROOT = Path(__file__).resolve().parent.parent
LABKIT = ROOT / "labkit"
# Raised without a code, by file: none (the workshop hub's and the room's have theirs too); a
# file may fall below its number, never rise above it, and no other file may raise one.
WITHOUT_CODE: dict[str, int] = {}


def calls(tree: ast.AST, name: str) -> list[ast.Call]:
    """Every call of `name` (LabError(...), refusal(...), errors.refusal(...))."""
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) == name
    ]


def strings(node: ast.AST) -> list[str]:
    """The whole codes an expression can give: a string, either branch of `a if test else b`,
    a dict's values, a subscript's value (`{...}[problem]`); never a test's comparand."""
    if isinstance(node, ast.Constant):
        return [node.value] if type(node.value) is str else []
    if isinstance(node, ast.IfExp):
        return strings(node.body) + strings(node.orelse)
    if isinstance(node, ast.Dict):
        return [code for value in node.values for code in strings(value)]
    if isinstance(node, ast.Subscript):
        return strings(node.value)
    return []


def sources() -> dict[str, ast.AST]:
    return {
        path.relative_to(ROOT).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(LABKIT.rglob("*.py"))
    }


def uncoded(tree: ast.AST) -> list[int]:
    """The lines of LabError(...) made with a message and no code."""
    return [
        call.lineno
        for call in calls(tree, "LabError")
        if len(call.args) < 2 and not any(k.arg == "code" for k in call.keywords)
    ]


def codes(tree: ast.AST) -> set[str]:
    """The codes a module raises: LabError(message, "code") and refusal("code"), or a name
    assigned the codes (code = "a" if ... else "b")."""
    assigned: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).extend(strings(node.value))
    found = set()
    given = [c.args[1] for c in calls(tree, "LabError") if len(c.args) >= 2]
    given += [c.args[0] for c in calls(tree, "refusal") if c.args]
    for code in given:
        found |= (
            set(assigned.get(code.id, [])) if isinstance(code, ast.Name) else set(strings(code))
        )
    return found


def test_no_labError_is_raised_without_a_code_outside_the_allowed_files():
    found = {path: uncoded(tree) for path, tree in sources().items()}
    over = {path: lines for path, lines in found.items() if len(lines) > WITHOUT_CODE.get(path, 0)}
    assert over == {}, f"LabErrors without a code (give each one, see errors.refusal): {over}"


def test_the_finder_sees_a_labError_without_a_code():
    tree = ast.parse('raise LabError(f"{x} is bad")\nraise LabError("m", "choice", what=1)')
    assert uncoded(tree) == [1]
    tree = ast.parse('code = "a" if x else "b"\nraise refusal(code)\nraise refusal("c")')
    assert codes(tree) == {"a", "b", "c"}
    tree = ast.parse('code = {"p": "d" if w == "x" else "e"}[p]\nraise LabError("m", code)')
    assert codes(tree) == {"d", "e"}


def test_every_code_raised_has_its_words_in_both_catalogues():
    raised = set().union(*(codes(tree) for tree in sources().values()))
    assert {"choice", "run_folder_missing", "killed_to_recover"} <= raised, raised
    for language in ("en", "zh"):
        words = catalogue(language)
        missing = sorted(c for c in raised if f"cli.error.{c}" not in words)
        assert missing == [], f"{language}: no cli.error.<code> for {missing}"


def labkit(tmp_path: Path, *args: str, language: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TMPDIR": str(tmp_path), "LABKIT_LANGUAGE": language}
    command = [sys.executable, "-m", "labkit", *args]
    return subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True)


def test_a_missing_run_folder_is_one_chinese_line(tmp_path):
    missing = tmp_path / "nope"
    done = labkit(tmp_path, "show", str(missing), language="zh")
    said = f"labkit：错误：{missing} 不存在；请给出一个运行目录，即存有 *.db 文件的目录"
    assert (done.returncode, done.stdout, done.stderr.splitlines()) == (2, "", [said])
    done = labkit(tmp_path, "show", str(missing), language="en")
    said = f"labkit: error: {missing} is not there; give a run folder, one that holds *.db files"
    assert (done.returncode, done.stderr.splitlines()) == (2, [said])


CHECKS = ("check_instance", "check_items", "check_record")


def constants(tree: ast.AST) -> dict[str, object]:
    """The module's names bound to a constant."""
    return {
        target.id: node.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def imported_constants(tree: ast.AST) -> dict[str, object]:
    """The constants a module imports by name from another labkit module."""
    found: dict[str, object] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("labkit."):
            path = ROOT / (node.module.replace(".", "/") + ".py")
            if path.is_file():
                theirs = constants(ast.parse(path.read_text(encoding="utf-8")))
                found |= {
                    a.asname or a.name: theirs[a.name] for a in node.names if a.name in theirs
                }
    return found


def expected_codes(tree: ast.AST) -> list[object]:
    """What a module passes as `expected` to the check_* helpers (the 4th argument): the
    string, or the string a name holds (the module's own, or one it imports from labkit);
    anything else as its source text. The retries views pass it through
    `checked(result, keys, made_by)`: "<made_by>_result"."""
    names = imported_constants(tree) | constants(tree)
    given = [call.args[3] for name in CHECKS for call in calls(tree, name) if len(call.args) > 3]
    found: list[object] = []
    for node in given:
        if isinstance(node, ast.Constant):
            found.append(node.value)
        elif isinstance(node, ast.Name) and node.id in names:
            found.append(names[node.id])
        elif ast.unparse(node) != "f'{made_by}_result'":
            found.append(ast.unparse(node))
    found += [f"{c.args[2].value}_result" for c in calls(tree, "checked") if len(c.args) > 2]
    return found


def test_every_expected_is_a_code_with_words_in_both_catalogues():
    given = [code for tree in sources().values() for code in expected_codes(tree)]
    assert len(given) > 50 and {"outbox_results", "run_drain_result"} <= set(given), given
    for language in ("en", "zh"):
        words = catalogue(language)
        missing = sorted({str(c) for c in given if f"cli.expected.{c}" not in words})
        assert missing == [], f"{language}: no cli.expected.<code> for {missing}"


def test_a_wrong_result_is_said_in_chinese_and_in_english(monkeypatch):
    import labkit.language
    from labkit.bench.errors import LabError
    from labkit.language.refusals import error_line
    from labkit.views.outbox import format_outbox_sweep

    with pytest.raises(LabError) as caught:
        format_outbox_sweep([None])
    english = "results must be a list of OutboxResult, not [None]"
    assert (str(caught.value), error_line(caught.value)) == (english, english)
    monkeypatch.setattr(labkit.language, "_chosen", ["zh"])
    assert error_line(caught.value) == "results 必须是 OutboxResult 的列表，而不是 [None]"


def test_a_panels_error_line_says_a_refusal_in_the_readers_language(monkeypatch):
    """A panel shows a refusal (a bad value given to its study) in the lesson's language, as
    the command line does; an error without a code keeps its own words."""
    import labkit.language
    from labkit.bench.errors import LabError
    from labkit.views.background import error_html
    from labkit.views.outbox import format_outbox_sweep

    with pytest.raises(LabError) as caught:
        format_outbox_sweep([None])
    monkeypatch.setattr(labkit.language, "_chosen", ["zh"])
    said = error_html(caught.value)
    assert "results 必须是 OutboxResult 的列表，而不是 [None]" in said, said
    assert "must be" not in said and said.startswith('<span style="color:#D55E00"><b>LabError:')
    assert "disk full" in error_html(OSError("disk full"))


def test_a_step_session_out_of_turn_names_the_process_in_chinese(
    tmp_path, monkeypatch, no_leftover_workers
):
    import labkit.language
    from labkit.bench.errors import LabError
    from labkit.language.refusals import error_line
    from labkit.studies.commit_window.stepping import StepSession

    with StepSession("effect_first", out=tmp_path / "run") as session:
        with pytest.raises(LabError) as paused:
            session.recover()
        session.kill()
        with pytest.raises(LabError) as killed:
            session.proceed()
    assert str(paused.value).startswith("cannot recover: the worker is still paused at 'start'")
    monkeypatch.setattr(labkit.language, "_chosen", ["zh"])
    said = [error_line(paused.value), error_line(killed.value)]
    assert said == [
        "无法恢复：worker 进程仍停在“start”；请先在那里 kill() 它，或 proceed() 到结束",
        "无法执行 proceed：worker 进程已在“start”被强杀；接下来请 recover()",
    ]
