"""Where runs live, and the command line's own refusals, in the reader's language (issue 29):
each LabError that bench/home.py, bench/folders.py and labkit/cli raise carries a code, and the
command line says its catalogue line (cli.error.<code>) in English or Chinese. The English line
the catalogue gives is the error's own text, word for word, so the two never drift apart.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from labkit.bench import home
from labkit.bench.errors import LabError
from labkit.language import set_language
from labkit.language.refusals import error_line

TMPDIR = "请把 TMPDIR 设为你自己的一个目录"


def labkit(tmp_path: Path, *args: str, **env: str) -> tuple[list[str], list[str]]:
    """stderr's lines of one command, in Chinese and in English (status 2 both times)."""
    said = []
    for language in ("zh", "en"):
        environ = {**os.environ, "TMPDIR": str(tmp_path), **env, "LABKIT_LANGUAGE": language}
        command = [sys.executable, "-m", "labkit", *args]
        done = subprocess.run(command, env=environ, cwd=tmp_path, capture_output=True, text=True)
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        said.append(done.stderr.splitlines())
    return said[0], said[1]


def said_in_both(error: LabError) -> str:
    """The error's Chinese line; its English line must be the error's own text."""
    try:
        set_language("en")
        assert error.code is not None and error_line(error) == str(error)
        set_language("zh")
        return error_line(error)
    finally:
        set_language("en")


def test_a_tmpdir_that_is_a_file_is_said_in_chinese(tmp_path):
    file = tmp_path / "file"
    file.write_text("")
    zh, en = labkit(tmp_path, "run", "atomic", TMPDIR=str(file))
    assert zh == [f"labkit：错误：TMPDIR {file} 不是目录；{TMPDIR}"]
    assert en == [f"labkit: error: TMPDIR {file} is not a folder; set TMPDIR to a folder of yours"]


def test_a_missing_tmpdir_is_said_in_chinese(tmp_path):
    gone = tmp_path / "gone"
    zh, en = labkit(tmp_path, "run", "atomic", TMPDIR=str(gone))
    assert zh == [f"labkit：错误：TMPDIR {gone}：No such file or directory；{TMPDIR}"]
    assert en == [
        f"labkit: error: TMPDIR {gone}: No such file or directory; set TMPDIR to a folder of yours"
    ]


def test_a_runs_home_that_is_a_link_is_said_in_chinese(tmp_path):
    (tmp_path / f"labkit-runs-{os.getuid()}").symlink_to(tmp_path)
    zh, _ = labkit(tmp_path, "run", "atomic")
    runs = tmp_path / f"labkit-runs-{os.getuid()}"
    assert zh == [
        f"labkit：错误：labkit 不会使用运行主目录 {runs}：它是一个符号链接；"
        f"请删除它，或把 {TMPDIR[3:]}"
    ]


def test_a_bad_size_to_keep_is_said_in_chinese(tmp_path):
    zh, en = labkit(tmp_path, "run", "atomic", LABKIT_RUNS_KEEP_MB="lots")
    most = home.KEEP_MB_MAX
    assert zh == [
        f"labkit：错误：LABKIT_RUNS_KEEP_MB=lots：请给出 0 到 {most} 之间的整数兆字节"
        "（默认 200；0 表示保留每一次运行）"
    ]
    assert en[0].startswith("labkit: error: LABKIT_RUNS_KEEP_MB='lots': give a whole number")


def test_an_output_folder_too_deep_or_under_a_file_is_said_in_chinese(tmp_path):
    deep = tmp_path / ("deep/" * 100)
    zh, en = labkit(tmp_path, "run", "atomic", "--out", str(deep))
    assert zh[0].startswith(f"labkit：错误：输出目录 {deep} 对 SQLite 来说太长：其中的运行目录有 ")
    assert en[0].startswith(f"labkit: error: the output folder {deep} is too long for SQLite")
    file = tmp_path / "file"
    file.write_text("")
    under = file / "run"
    zh, en = labkit(tmp_path, "run", "atomic", "--out", str(under))
    assert zh == [
        f"labkit：错误：无法创建输出目录 {under}：Not a directory ({tmp_path / 'file'} is a file)"
    ]
    assert en == [
        f"labkit: error: cannot make the output folder {under}: Not a directory ({file} is a file)"
    ]


@pytest.mark.parametrize(
    ("args", "chinese", "english"),
    [
        (
            ("pg-race", "--lock", "nope"),
            "未知的锁“nope”；请从中选：",
            "unknown lock 'nope'; choose from: ",
        ),
        (
            ("drain", "--grace", "soon"),
            "秒数必须是一个数，而不是 soon",
            "a number of seconds, not 'soon'",
        ),
        (
            ("pg-durability", "--mode", "sync,sync"),
            "durability 档“sync”给了两次；每个只给一次",
            "durability mode 'sync' is given twice; give each once",
        ),
        (
            ("call", "--timeout", "abc"),
            "秒数必须是一个数，而不是 abc",
            "a number of seconds, not 'abc'",
        ),
        (
            ("explore", "my_step:step", "--timeout", "abc"),
            "秒数必须是一个数，而不是 abc",
            "a number of seconds, not 'abc'",
        ),
        (
            ("explore", "my_step:step", "--resume", "{bad"),
            "不是 JSON：“{bad”；请给出一个 JSON 值，例如",
            "not JSON: '{bad'; give a JSON value, e.g.",
        ),
    ],
)
def test_an_option_s_bad_value_is_said_in_chinese(tmp_path, args, chinese, english):
    zh, en = labkit(tmp_path, *args)
    assert len(zh) == 1 and chinese in zh[0] and zh[0].startswith("labkit：错误：argument ")
    assert len(en) == 1 and english in en[0] and en[0].startswith("labkit: error: argument ")


@pytest.mark.parametrize(
    ("kind", "uid", "mode", "chinese"),
    [
        (stat.S_IFLNK, 0, 0o777, "它是一个符号链接；请删除它，或"),
        (stat.S_IFLNK, 1, 0o777, "它是一个符号链接；请把"),
        (stat.S_IFREG, 0, 0o600, "它不是目录；请删除它，或"),
        (stat.S_IFREG, 1, 0o600, "它不是目录；请把"),
        (stat.S_IFDIR, 1, 0o700, "它属于用户 {owner}，不属于你；请把"),
        (stat.S_IFDIR, 0, 0o777, "别人也能写它（权限 777）；请删除它，或"),
    ],
)
def test_every_refused_runs_home_is_said_in_chinese(
    tmp_path, monkeypatch, kind, uid, mode, chinese
):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    owner = os.getuid() + uid
    info = SimpleNamespace(st_mode=kind | mode, st_uid=owner)
    monkeypatch.setattr(home.os, "lstat", lambda path: info)
    with pytest.raises(LabError) as raised:
        home.runs_home()
    assert chinese.format(owner=owner) in said_in_both(raised.value)


def test_a_run_folder_that_cannot_be_made_is_said_in_chinese(tmp_path):
    error = home.cannot_make_error(
        "a run folder in", tmp_path, OSError(28, "No space left on device")
    )
    assert said_in_both(error) == f"无法在 {tmp_path} 中创建运行目录：No space left on device"
    error = home.cannot_make_error(
        "the runs home", tmp_path, OSError(28, "No space left on device")
    )
    assert said_in_both(error) == f"无法创建运行主目录 {tmp_path}：No space left on device"


def test_an_ignored_file_above_the_run_folder_is_said_in_one_line_in_both(tmp_path):
    (tmp_path / "booking.py").write_text("def step(control, effect, gate):\n    pass\n")
    zh, en = labkit(tmp_path, "explore", "booking:step", "--ignore-file", "../agent.log")
    assert zh == [
        "labkit：错误：ignore_files 接受不算副作用的文件的模式：运行目录里的，例如 '*.log' 或 "
        "'logs/*'；或运行目录外的，用绝对路径，例如 '/var/log/agent/*.log'（一个 str，或它们的"
        "列表），而不是 ['../agent.log']"
    ]
    assert en == [
        "labkit: error: ignore_files takes patterns of files that are no effect, in the run "
        "folder such as '*.log' or 'logs/*', or outside it by an absolute path such as "
        "'/var/log/agent/*.log' (a str, or a list of them), not ['../agent.log']"
    ]


@pytest.mark.parametrize(
    ("args", "chinese"),
    [
        ((), "labkit：错误：请给出一个命令，从中选一个：orders, run, sweep"),
        (("run",), "labkit：错误：请给出一个写入顺序，从中选一个：effect_first, checkpoint_first"),
        (("pitfall",), "labkit：错误：请给出一个陷阱，从中选一个：recover_after_exit_kill"),
        (("show", ""), "labkit：错误：请给出一个运行目录，而不是 ''；即存有 *.db 文件的目录"),
    ],
)
def test_a_missing_choice_or_an_empty_run_folder_is_said_in_chinese(tmp_path, args, chinese):
    zh, _ = labkit(tmp_path, *args)
    assert len(zh) == 1 and zh[0].startswith(chinese), zh


def test_a_harmless_program_given_by_its_path_is_said_in_one_line_in_both(tmp_path):
    (tmp_path / "booking.py").write_text("def step(control, effect, gate):\n    pass\n")
    zh, en = labkit(tmp_path, "explore", "booking:step", "--harmless-program", "/usr/bin/curl")
    assert zh == [
        "labkit：错误：harmless_programs 接受你的代码启动的、不触及运行文件夹之外任何东西的程序的"
        "名字，例如 'sh'（命令行的 shell）或 'convert'（是名字而不是路径；一个 str，或它们的"
        "列表），而不是 ['/usr/bin/curl']"
    ]
    assert en == [
        "labkit: error: harmless_programs takes the names of programs your code starts that "
        "reach nothing outside the run folder, such as 'sh' (a command line's shell) or "
        "'convert' (a name, not a path; a str, or a list of them), not ['/usr/bin/curl']"
    ]
