"""The command line in Chinese (issue 27, item 9): with LABKIT_LANGUAGE=zh, labkit's own help
texts, step mode's lines and prompt, and the one-line errors are Chinese; argparse's own words
("usage:", "show this help message and exit") may stay. Without it, English as before."""

from __future__ import annotations

import os
import subprocess
import sys
from argparse import Namespace

import pytest

from labkit.language import catalogue
from tests.chinese import assert_chinese

ZH = catalogue("zh")


def labkit(tmp_path, *args: str, language: str | None = "zh") -> subprocess.CompletedProcess:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    env.pop("LABKIT_LANGUAGE", None)
    if language:
        env["LABKIT_LANGUAGE"] = language
    command = [sys.executable, "-m", "labkit", *args]
    return subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True)


def test_the_help_lists_every_command_in_chinese(tmp_path):
    done = labkit(tmp_path, "--help")
    assert (done.returncode, done.stderr) == (0, "")
    assert ZH["cli.main.description"] in done.stdout
    for key in ("cli.commit_window.run.help", "cli.retries.drain.help", "cli.explore.explore.help"):
        assert ZH[key] in done.stdout, key
    assert_chinese(done.stdout, ["cli"])


@pytest.mark.parametrize("command", ["run", "claim", "pg-durability", "explore"])
def test_a_commands_help_is_chinese(tmp_path, command):
    done = labkit(tmp_path, command, "--help")
    assert (done.returncode, done.stderr) == (0, "")
    assert "取值之一" in done.stdout or "默认" in done.stdout
    assert_chinese(done.stdout, ["cli"])


def test_without_the_language_the_help_is_english_as_before(tmp_path):
    done = labkit(tmp_path, "run", "--help", language=None)
    text = " ".join(done.stdout.split())  # argparse wraps at the terminal's width
    assert done.returncode == 0
    assert "a kill point of the order, or none" in text
    assert "a new folder for the run (default: a new folder in the runs home)" in text


@pytest.mark.parametrize(
    ("args", "chinese", "english"),
    [
        (
            ("run", "nope"),
            "labkit：错误：未知的写入顺序“nope”；请从中选一个：effect_first, checkpoint_first, "
            "atomic, idempotent",
            "labkit: error: unknown write order 'nope'; choose one of: effect_first, "
            "checkpoint_first, atomic, idempotent",
        ),
        (
            ("run", "effect_first", "--kill-at", "zzz"),
            "labkit：错误：effect_first 没有这个强杀点：“zzz”；请从中选一个：start, effect, "
            "checkpoint, none",
            "labkit: error: unknown kill point for effect_first 'zzz'; choose one of: start, "
            "effect, checkpoint, none",
        ),
        (
            ("durability", "--trials", "0"),
            "labkit：错误：argument --trials: 试验次数必须是 1 到 500 之间的整数，而不是 0",
            "labkit: error: argument --trials: trials must be a whole number from 1 to 500, not 0",
        ),
        (
            ("outbox", "--sweep", "--consumer", "dedupe"),
            "labkit：错误：--sweep 两种消费者都运行；请去掉 --consumer",
            "labkit: error: --sweep runs both consumers; leave out --consumer",
        ),
    ],
)
def test_bad_input_is_one_chinese_line_and_status_2(tmp_path, args, chinese, english):
    done = labkit(tmp_path, *args)
    assert (done.returncode, done.stdout, done.stderr.splitlines()) == (2, "", [chinese])
    done = labkit(tmp_path, *args, language=None)
    assert (done.returncode, done.stdout, done.stderr.splitlines()) == (2, "", [english])


def test_step_mode_asks_and_answers_in_chinese(tmp_path, capsys, chinese, no_leftover_workers):
    from labkit.cli.commit_window import cmd_step

    pressed, prompts = iter(["x", "q"]), []

    def answer(prompt: str) -> str:
        prompts.append(prompt)
        return next(pressed)

    cmd_step(Namespace(order="effect_first", out=str(tmp_path / "run")), answer=answer)
    out = capsys.readouterr().out
    assert prompts == [ZH["cli.step.prompt"]] * 2
    assert "强杀点：start → effect → checkpoint" in out
    assert "按键：Enter 或 c：继续 · k：在这里 kill -9 worker 进程" in out
    assert "=== 停在“start”" in out and "“x”不是可用的按键" in out
    assert "已退出：worker 进程已被强杀并回收。运行目录：" in out
    assert_chinese(out, ["cli"])


def test_a_commands_own_lines_follow_the_language(tmp_path):
    done = labkit(tmp_path, "clean", "--dry-run")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("将删除 0 个运行目录（0.0 MB），在 ")
    assert "运行主目录占用 0.0 MB；" in done.stdout
    done = labkit(tmp_path, "clean", "--dry-run", language=None)
    assert done.stdout.startswith("would remove 0 run folders (0.0 MB) from ")


def test_a_bad_input_found_in_the_trial_server_is_said_in_chinese_too(chinese):
    """A LabError raised in the trial server crosses the pipe with its code and fields, so the
    command line says it in the reader's language, as it says one raised in its own process."""
    from labkit.bench import server
    from labkit.bench.errors import LabError
    from labkit.language.refusals import error_line

    asked = {"what": "kill point", "value": "zzz", "choices": ["start", "none"], "of": "x"}
    with pytest.raises(LabError) as raised:
        server.call_on("light", "labkit.bench.errors:check_choice", **asked)
    assert str(raised.value) == "unknown kill point for x 'zzz'; choose one of: start, none"
    assert error_line(raised.value) == "x 没有这个强杀点：“zzz”；请从中选一个：start, none"


def test_an_output_folder_that_exists_is_said_in_chinese(tmp_path):
    (tmp_path / "taken").mkdir()
    done = labkit(tmp_path, "run", "effect_first", "--out", str(tmp_path / "taken"))
    line = f"labkit：错误：输出目录 {tmp_path / 'taken'} 已经存在；请换一个新的名字"
    assert (done.returncode, done.stderr.splitlines()) == (2, [line])


def test_the_readers_code_that_fails_without_a_crash_is_one_chinese_line(tmp_path):
    """A failure is said from its code (bench.failures) in the CLI's language: which worker, its
    exit status, the reader's own error quoted, at the reader's line."""
    (tmp_path / "bug.py").write_text("def step(control, effect, gate):\n    return {}['n']\n")
    done = labkit(tmp_path, "explore", "bug:step", "--out", str(tmp_path / "x"))
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert done.stderr == (
        "labkit：错误：你的代码在不崩溃的运行里失败了：记录运行的 worker 进程退出，退出码 1："
        f"原话“KeyError: 'n'”（bug.py 第 2 行）；见 {tmp_path / 'x' / 'record'}\n"
    )
