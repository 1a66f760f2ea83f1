"""What the crash explorer watches and how it judges, on graphs shaped as outside users write
them (tests/outside/: LangGraph docs' shapes, not the lab's own studies): issue 25, items 1, 2,
3, 5, 6, 13 and 14. Each test failed on the code before its item."""

from __future__ import annotations

import dbm.dumb
import json
import os
import secrets
import shelve
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import pytest
from chinese import assert_no_english

from labkit.bench.errors import CodeFailed, LabError
from labkit.bench.portable import AS_ON_MACOS
from labkit.language import set_language
from labkit.studies.explorer.replay import explore
from labkit.studies.explorer.stepping import ExplorerStepSession
from labkit.views.explorer import matrix_html, state_html
from labkit.views.explorer_words import failed_words, matrix_text, unwatched_words

OUTSIDE = Path(__file__).parent / "outside"


def target(module: str, name: str = "graph") -> str:
    return f"{OUTSIDE / module}.py:{name}"


def failing(exploration) -> dict:
    return {(p.op, p.detail): p.outcome for p in exploration.failing}


def test_item_1_a_sqlite_file_of_any_name_is_watched_by_its_header():
    found = explore(target("sqlite_file"), "graph")
    commits = [p for p in found.points if p.op == "commit"]
    assert [p.detail for p in commits] == ["travel.sqlite"] * 2, found.summary()
    assert failing(found)[commits[-1].op, "travel.sqlite"] == "duplicate", found.summary()
    assert found.clean["travel.sqlite"] == {"bookings": [["LX 38"]]}


def test_item_1_a_file_neither_sqlite_nor_text_is_named_as_unwatched():
    found = explore(target("pickle_cache"), "graph")
    unseen = [unwatched_words(w) for w in found.unwatched]
    assert [w for w in unseen if w.startswith("cache.pkl")], found.summary()
    assert not found.green and "cache.pkl" in found.summary()


def test_item_2_an_update_run_twice_is_inconsistent_though_no_row_is_added():
    found = explore(target("update_tool"), "graph")
    [update] = [p for p in found.points if p.where == "update_tool.py:26"]
    assert found.point(update.n).outcome == "inconsistent", found.summary()
    complaint = found.point(update.n).complaint  # the id is SQLite's: not compared (null)
    assert "holds [null, 80] where the run without a crash left [null, 90]" in complaint
    assert not found.green


def test_item_6_a_graph_on_an_in_memory_saver_is_refused_in_one_line_not_given_sqlite():
    with pytest.raises(LabError) as refused:
        explore(target("in_memory"), "graph")
    assert "InMemorySaver" in str(refused.value) and "\n" not in str(refused.value)


def test_item_2_a_generated_integer_id_is_not_compared():
    found = explore(target("replace_status"), "graph")
    assert found.green, found.summary()  # INSERT OR REPLACE run twice: a new id, the same row


def test_item_3_an_append_without_fsync_is_a_crash_point_and_its_window_is_found():
    found = explore(target("file_outbox"), "graph")
    made, write = [p for p in found.points if p.op == "write"]  # the file made, then its line
    assert {made.where, write.where} == {"file_outbox.py:18"}, found.summary()
    assert (made.detail, found.point(made.n).outcome) == ("outbox.txt", "consistent")
    assert (write.detail, found.point(write.n).outcome) == ("outbox.txt", "duplicate")


def test_item_5_a_write_outside_the_run_folder_fails_the_exploration(tmp_path):
    code = (OUTSIDE / "elsewhere.py").read_text()
    code = code.replace('os.path.join(os.path.expanduser("~"), "orders")', repr(str(tmp_path)))
    (tmp_path / "elsewhere.py").write_text(code)
    found = explore(f"{tmp_path}/elsewhere.py:graph", "graph")
    assert found.outside == [str(tmp_path / "orders.db")] and not found.green
    assert str(tmp_path / "orders.db") in found.summary()
    assert len(found.points) == 1  # no replay wrote there again


def test_item_14_task_writes_are_named_by_the_task_and_lines_are_the_readers_deepest():
    found = explore(target("task_nodes"), "graph")
    writes = {p.detail: p.where for p in found.points if p.op == "put_writes"}
    assert writes["writes of task charge_card"] == "task_nodes.py:15", writes
    assert writes["writes of task send_receipt"] == "task_nodes.py:23", writes
    driven = explore(target("driver", "run"), "callable")
    [insert] = [p for p in driven.points if p.op == "commit" and p.where == "store.py:9"]
    assert driven.point(insert.n).outcome == "duplicate", driven.summary()


@pytest.mark.parametrize("module", ["task_nodes", "fan_out"])
def test_item_13_the_same_graph_gives_the_same_matrix_ten_runs_out_of_ten(module):
    matrices = {
        tuple((p.op, p.detail, p.outcome) for p in explore(target(module), "graph").points)
        for _ in range(10)
    }
    assert len(matrices) == 1, matrices


def test_item_3_a_watched_file_is_read_iterated_and_written_as_the_file_itself(tmp_path):
    from labkit.studies.explorer.written_file import WrittenFile

    path, reached = tmp_path / "outbox.txt", []
    path.write_text("one\ntwo\n")
    with WrittenFile(open(path, "r+"), lambda: reached.append(path.read_text())) as outbox:
        assert next(outbox) == "one\n" and list(outbox) == ["two\n"]
        outbox.write("three\n")
    assert reached[-1] == path.read_text() == "one\ntwo\nthree\n"


def test_item_3_a_write_on_a_descriptor_is_a_crash_point_and_its_window_is_found():
    """`os.open` + `os.write`: the outbox line is a crash point at the reader's line, and a
    crash there sends the mail twice."""
    found = explore(target("file_outbox", "by_descriptor"), "graph")
    made, write = [p for p in found.points if p.op == "write"]  # os.open's O_CREAT, os.write
    assert (made.detail, made.where) == ("outbox.log", "file_outbox.py:24"), found.summary()
    assert found.point(made.n).outcome == "consistent", found.summary()
    assert (write.detail, write.where) == ("outbox.log", "file_outbox.py:26"), found.summary()
    assert found.point(write.n).outcome == "duplicate", found.summary()
    assert found.clean["outbox.log"] == ["to=ada@example.com"]


def test_a_file_changed_with_no_crash_point_of_its_own_keeps_the_matrix_from_green():
    """Another program appends to the outbox: the explorer cannot crash between its write and
    the node's saved writes, so it names the file as unwatched, never green (the shell that
    runs it declared harmless: it writes in the run folder only)."""
    found = explore(target("shell_outbox"), "graph", harmless_programs="sh")
    said = [unwatched_words(w) for w in found.unwatched]
    assert said == ["outbox.log changed with no crash point of its own"], found.summary()
    assert not found.green and "outbox.log" in found.summary()
    assert found.clean["outbox.log"] == ["to=ana@example.com"]


def test_item_5_a_recovery_that_writes_outside_the_run_folder_fails_its_row(tmp_path):
    """The run without a crash stays in its folder; a recovery that finds the receipt appends
    to an alert log elsewhere. Its row fails (no outcome claimed), the exploration names the
    file, and the matrix is not green."""
    alerts = tmp_path / "alerts.log"
    found = explore_alerting(tmp_path, alerts)
    assert found.outside == [str(alerts)] and not found.green, found.summary()
    wrote = [p for p in found.points if p.failed and p.failed["code"] == "recovery_outside"]
    assert wrote and all(p.outcome == "failed" for p in wrote), found.points
    assert alerts.read_text().count("retried") == len(wrote)  # each such recovery wrote once


def test_item_5_a_path_with_a_comma_is_one_path_from_its_detection_to_the_report(tmp_path):
    """The recovery's outside files go as a tuple of paths from the worker to the report,
    joined only in the reader's words: a path with ", " in it stays one path."""
    alerts = tmp_path / "on call, night" / "alerts, urgent.log"
    alerts.parent.mkdir()
    found = explore_alerting(tmp_path, alerts)
    assert found.outside == [str(alerts)] and not found.green, found.summary()
    [row, *_] = [p for p in found.points if p.failed and p.failed["code"] == "recovery_outside"]
    assert row.failed["files"] == (str(alerts),)
    assert failed_words(row.failed) == f"the recovery wrote outside its run folder: {alerts}"
    two = {"code": "recovery_outside", "files": (str(alerts), "/tmp/b")}
    assert failed_words(two).endswith(f"{alerts}, /tmp/b")
    set_language("zh")
    try:
        assert failed_words(two).endswith(f"{alerts}、/tmp/b")
    finally:
        set_language("en")


def explore_alerting(tmp_path: Path, alerts: Path):
    """retry_alert.py's graph, its alert log at `alerts`, explored with one restart."""
    code = (OUTSIDE / "retry_alert.py").read_text()
    code = code.replace('os.path.join(os.path.expanduser("~"), "alerts.log")', repr(str(alerts)))
    (tmp_path / "retry_alert.py").write_text(code)
    return explore(f"{tmp_path}/retry_alert.py:graph", "graph", restart_at="now")


def test_a_log_named_as_no_effect_is_seen_by_no_checker_and_the_effect_still_is():
    """`logging` to agent.log says "booking" again after any crash before the end: without
    `ignore_files` the keyed booking fails on its log; with it, green, and the summary says
    what no checker saw. The log's writes stay crash points, and a booking that is not keyed
    still fails on its table."""
    logged = explore(target("logged_booking", "booked_once"), "graph")
    assert {p.detail for p in logged.failing} == {"agent.log", "travel.sqlite"}, logged.summary()
    assert all("agent.log holds" in p.complaint for p in logged.failing), logged.summary()
    keyed = explore(target("logged_booking", "booked_once"), "graph", ignore_files="*.log")
    assert keyed.green and "no checker saw *.log" in keyed.summary(), keyed.summary()
    assert [p.detail for p in keyed.points if p.op == "write"] == ["agent.log"] * 3
    assert keyed.clean["agent.log"] == ["booking LX 38", "booked LX 38"]  # the report keeps it
    unkeyed = explore(target("logged_booking", "booked"), "graph", ignore_files=["agent.log"])
    assert unkeyed.failing and not unkeyed.green, unkeyed.summary()  # after the commit: 7, 8
    assert all("bookings holds 2" in p.complaint for p in unkeyed.failing), unkeyed.summary()


def test_a_file_named_as_no_effect_is_never_a_window_left_unexplored():
    """cache.pkl cannot be judged (test_item_1's), outbox.log changes with no crash point of
    its own (another program writes it): named in `ignore_files`, nothing is lost. The program
    is a shell, `sh -c "echo ... >> outbox.log"`, which writes in the run folder only: declared
    harmless (`harmless_programs`), it is no write outside, and the summary says so."""
    found = explore(target("pickle_cache"), "graph", ignore_files="*.pkl")
    assert found.green and not found.unwatched, found.summary()
    found = explore(target("shell_outbox"), "graph", ignore_files="outbox.log")
    assert found.outside == ["program:sh"] and not found.green, found.summary()
    declared = {"ignore_files": "outbox.log", "harmless_programs": ["sh"]}
    found = explore(target("shell_outbox"), "graph", **declared)
    assert found.green and not found.unwatched and not found.outside, found.summary()
    assert "what sh did beyond the run folder's files went unseen" in found.summary()


@pytest.mark.parametrize("patterns", [["../agent.log"], ["/var/../agent.log"], [""], ["/"], [3], 3])
def test_ignore_files_takes_patterns_of_files_and_nothing_else(patterns):
    with pytest.raises(LabError, match="ignore_files takes patterns of files that are no effect"):
        explore(target("logged_booking", "booked_once"), "graph", ignore_files=patterns)


def test_a_log_outside_the_run_folder_named_by_its_absolute_path_is_no_write_outside(tmp_path):
    """logged_booking's log kept at an absolute path, as an application's settings keep it:
    a write outside the run folder, which stops the exploration, until `ignore_files` names it
    by that path; then the keyed booking is green and the unkeyed one fails on its table. A
    relative pattern ("*.log") names files in the run folder only."""
    log = tmp_path / "var log" / "agent.log"
    log.parent.mkdir()
    code = (OUTSIDE / "logged_booking.py").read_text()
    (tmp_path / "booking.py").write_text(code.replace('"agent.log"', repr(str(log))))
    keyed, unkeyed = f"{tmp_path}/booking.py:booked_once", f"{tmp_path}/booking.py:booked"
    for patterns in ((), "*.log"):
        found = explore(keyed, "graph", ignore_files=patterns)
        assert found.outside == [str(log)] and not found.green, found.summary()
    found = explore(keyed, "graph", ignore_files=f"{log.parent}/*.log")
    assert found.green and found.crash_states > 1 and not found.outside, found.summary()
    assert "booked LX 38" in log.read_text()  # written, each run: the reader's choice
    found = explore(unkeyed, "graph", ignore_files=[str(log)])
    assert not found.outside and not found.green, found.summary()
    assert all("bookings holds 2" in p.complaint for p in found.failing), found.summary()


@pytest.mark.parametrize("durability", ["sync", "async"])  # crash states forked, and run to
def test_files_the_code_reads_by_a_relative_path_come_into_every_run_folder(durability):
    """Without them the run without a crash fails in one line, at the reader's line; with
    `with_files`, every run folder (the recording's, each crash state's) has prompts/ as the
    project has it, unchanged in every state."""
    prompted = target("prompted_booking")
    with pytest.raises(CodeFailed, match=r"FileNotFoundError.*prompts/system.txt.*line 15"):
        explore(prompted, "graph", durability=durability)
    found = explore(prompted, "graph", durability=durability, with_files=[OUTSIDE / "prompts"])
    assert found.green and found.crash_states > 1, found.summary()
    said = ["You are a booking agent: book each flight once."]
    assert found.clean["prompts/system.txt"] == said
    assert all((Path(p.run_dir) / "prompts" / "system.txt").exists() for p in found.points)


@pytest.mark.parametrize(
    "paths", [["no-such-folder"], [OUTSIDE / "prompts", OUTSIDE / "prompts"], 3, [""]]
)
def test_with_files_takes_files_that_exist_each_under_a_name_of_its_own(paths):
    with pytest.raises(LabError, match="with_files takes files or folders that exist"):
        explore(target("prompted_booking"), "graph", with_files=paths)


def test_step_mode_brings_the_files_the_code_reads_too(tmp_path):
    """A step that reads its prompt by a relative path, explored and then stepped through:
    step mode's run folder has prompts/ as the exploration's had."""
    (tmp_path / "prompted.py").write_text(
        "def step(control, effect, gate):\n"
        "    with open('prompts/system.txt') as prompt:\n"
        "        payload = prompt.read().strip()\n"
        "    with effect:\n        effect.add_receipt_once('k', payload)\n"
        "    with control:\n        control.mark_done()\n"
    )
    prompts = OUTSIDE / "prompts"
    found = explore(f"{tmp_path}/prompted.py:step", out=tmp_path / "x", with_files=prompts)
    assert found.green, found.summary()
    with ExplorerStepSession(found, out=tmp_path / "step") as session:
        session.run_to(1)
        assert session.state()["prompts/system.txt"] == [(prompts / "system.txt").read_text()[:-1]]
        session.kill()


def balance(run_dir: str) -> object:
    """The traveller's miles in a run folder's shelf, read as the reader's code reads it."""
    with shelve.open(str(Path(run_dir) / "miles"), "r") as miles:
        return miles["ada"]


def test_a_shelf_on_dbm_dumb_is_judged_by_what_it_holds_not_by_its_index_offsets():
    """shelve_miles' graph keeps the balance, an int, on dbm.dumb: three files, the index
    (miles.dir, its backup miles.bak) a line a key with the byte offset of its value. Read as
    dbm.dumb reads it, the shelf is one entry, miles.dat: a row is inconsistent where recovery
    credited the miles twice, and consistent where the balance is right at another offset (such
    rows said "inconsistent: miles.bak holds "'ada', (512, 15)"", a verdict about offsets)."""
    found = explore(target("shelve_miles"), "graph")
    assert found.clean["miles.dat"] == [{"ada": 500}] and not found.unwatched, found.summary()
    assert not [name for name in found.clean if name.endswith((".dir", ".bak"))], found.clean
    twice = 'miles.dat holds {"ada": 1000} where the run without a crash left {"ada": 500}'
    right_at = set()  # the index of each row whose balance is right
    for p in found.points:
        if balance(p.run_dir) == 1000:
            assert (p.outcome, p.complaint) == ("inconsistent", f"inconsistent: {twice}"), p
        else:
            assert balance(p.run_dir) == 500 and "miles" not in (p.complaint or ""), p
            right_at.add(Path(p.run_dir, "miles.dir").read_text())
    assert "inconsistent" in {p.outcome for p in found.points} and len(right_at) > 1, right_at
    assert "duplicate" in {p.outcome for p in found.points if p.detail == "bookings.db"}
    assert not found.green


def test_a_shelf_whose_index_alone_changes_changes_at_its_index_writes(tmp_path):
    """`redeemed` deletes the balance from a shelf the run brings: dbm.dumb rewrites its index
    only (miles.dir, renamed to miles.bak first), never miles.dat, whose entry is what changed.
    The index's writes are the shelf's crash points, so no change went unseen, and the index,
    written but no entry of the state, is no temporary. Green."""
    with shelve.Shelf(dbm.dumb.open(str(tmp_path / "miles"))) as miles:
        miles["ada"] = 500
    brought = [tmp_path / name for name in ("miles.dat", "miles.dir", "miles.bak")]
    found = explore(target("shelve_miles", "redeemed"), "graph", with_files=brought)
    assert found.green and not found.unwatched, found.summary()
    assert found.clean["miles.dat"] == [] and not found.temporaries, found.temporaries
    assert {p.detail for p in found.points if p.op == "write"} == {"miles.dir", "miles.bak"}


def test_a_shelf_no_checker_can_read_leaves_its_rows_not_judged_never_consistent(chinese):
    """in_decimals credits miles as a Decimal, no plain data: no checker reads the shelf (to
    unpickle a Decimal would run its class's code), so the rows where it holds other values
    than the run without a crash's are not judged (never consistent), and a row says
    consistent only where it holds the same; the booking's duplicate in SQLite keeps its
    verdict. Said in Chinese and in English."""
    found = explore(target("shelve_miles", "in_decimals"), "graph")
    shelf = [name for name, held in found.clean.items() if isinstance(held, str)]
    not_judged = [p for p in found.points if p.outcome == "not_judged"]
    assert not_judged and shelf == ["miles.dat"] and not found.green, found.matrix()
    for p in not_judged:  # what the rows would have called consistent: miles credited twice
        assert balance(p.run_dir) == 1000, found.matrix()
    for p in found.points:
        if p.outcome == "consistent":
            assert balance(p.run_dir) == 500, found.matrix()
    assert "duplicate" in {p.outcome for p in found.points if p.detail == "bookings.db"}
    text, html = matrix_text(found), matrix_html(found)
    assert "未判定" in text and "无法读取（既不是 SQLite 也不是文本）" in text, text
    assert ">未判定</b>" in html and f"{not_judged[0].label} 未判定" in found.summary()
    shown = state_html(found.clean)  # the step panel's files: not "36 lines" of a digest
    assert all(f"<b>{name}</b> 既不是 SQLite 也不是文本：未读取" in shown for name in shelf)
    assert_no_english("\n".join([text, html, shown]), ["explorer"], ["explorer.outcome."])
    set_language("en")
    text = matrix_text(found)
    assert "not judged" in text and f"{not_judged[0].finding['file']} cannot be read" in text
    assert f"{not_judged[0].label} not judged" in found.summary()
    exported = {p["n"]: p for p in found.to_json()["points"]}  # --json: the codes
    assert exported[not_judged[0].n]["outcome"] == "not_judged"
    assert exported[not_judged[0].n]["finding"]["code"] == "not_read"


@pytest.fixture
def refunds():
    """The shop's order service, run by the test on 127.0.0.1: each POST that carries its
    token is counted (another user of the machine gets 403 and is not)."""
    token, received = secrets.token_hex(16), []

    class Service(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
            allowed = secrets.compare_digest(self.headers.get("X-Token", ""), token)
            if allowed:
                received.append(body)
            self.send_response(204 if allowed else 403)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Service)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/refunds"
    try:
        yield SimpleNamespace(config={"configurable": {"url": url, "token": token}}, got=received)
    finally:
        server.shutdown()
        serving.join()
        server.server_close()


@pytest.mark.parametrize(
    ("name", "program"),
    [
        ("graph", "curl"),  # subprocess.run(["curl", ...])
        ("by_shell", "sh"),  # a command line: the program is the shell
        ("by_system", "sh"),
        ("by_spawn", "curl"),
        ("by_spawnvp", "curl"),
        ("by_asyncio", "curl"),
    ],
)
def test_a_program_the_code_starts_fails_the_exploration_and_is_not_started_again(
    name, program, refunds
):
    """A node that POSTs with curl: the explorer cannot see the request another program sends,
    so it must never say green (it did, and every replay posted again). Each way Python starts
    a program is noted by the program's name, the service gets the one POST of the run without
    a crash, and the summary says, in its words, what to do."""
    found = explore(target("curl_webhook", name), "graph", config=refunds.config)
    assert found.outside == [f"program:{program}"] and not found.green, found.summary()
    assert refunds.got == ["refund=o-10"]  # no replay posted it again
    assert found.point(None).failed["code"] == "run_program", found.point(None)
    assert f"the run without a crash started {program}:" in failed_words(found.point(None).failed)
    assert f"your code started {program}: the explorer cannot see" in found.summary()
    assert "declare it harmless (harmless_programs)" in found.summary()


@pytest.mark.parametrize(
    ("name", "program"),
    [
        ("step", "echo"),  # subprocess.run, in a step's worker (the light server's)
        ("spawned", os.path.basename(sys.executable)),  # multiprocessing's new Python
    ],
)
def test_a_program_a_step_starts_fails_the_exploration(name, program):
    """In a step's worker too, and by `_posixsubprocess.fork_exec` itself, as multiprocessing's
    "spawn" and "forkserver" start their Python: the program is noted by its name. (A spawned
    Python is also sent its work down a pipe, a write outside the run folder of its own.)"""
    found = explore(target("program_step", name))
    assert f"program:{program}" in found.outside and not found.green, found.summary()
    assert found.point(None).failed["code"] == "run_program", found.point(None)


def test_a_program_a_recovery_starts_fails_its_row(refunds):
    """`retried` runs curl only when it finds its receipt from a run before: the run without a
    crash never does, each recovery after the receipt does. Those rows fail (no outcome
    claimed), the exploration names the program, and the matrix is not green."""
    retried = target("curl_webhook", "retried")
    found = explore(retried, "graph", config=refunds.config, restart_at="now")
    assert found.outside == ["program:curl"] and not found.green, found.summary()
    started = [p for p in found.points if p.failed and p.failed["code"] == "recovery_program"]
    assert started and all(p.outcome == "failed" for p in started), found.points
    assert len(refunds.got) == len(started)  # each such recovery posted once
    assert failed_words(started[0].failed).startswith("the recovery started curl: the explorer")


def test_a_program_declared_harmless_is_taken_at_the_readers_word(refunds):
    """Declared harmless, curl is no longer noted: the crash states are explored (each replay
    that runs the node posts again, the reader's choice) and the summary says what it took on
    the reader's word."""
    declared = explore(
        target("curl_webhook"), "graph", config=refunds.config, harmless_programs="curl"
    )
    assert declared.green and declared.crash_states > 1 and not declared.outside, declared.summary()
    assert len(refunds.got) > 1
    assert "what curl did beyond the run folder's files went unseen" in declared.summary()


def test_the_program_and_its_declaration_are_said_in_chinese(refunds, chinese):
    found = explore(target("curl_webhook", "by_shell"), "graph", config=refunds.config)
    assert "你的代码启动了 sh：探索器看不到程序在运行文件夹的文件之外做了什么" in found.summary()
    assert failed_words(found.point(None).failed).startswith("不崩溃的运行启动了 sh：")
    found = explore(target("shell_outbox"), "graph", harmless_programs="sh")
    assert "；sh 已声明为无害的（harmless_programs）" in found.summary(), found.summary()


def test_the_command_line_takes_harmless_programs(refunds, tmp_path):
    """`labkit explore` as a user runs it: status 1 and the program named; with
    `--harmless-program curl`, status 0."""

    def run(out: str, *more: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "labkit", "explore", target("curl_webhook")]
        command += ["--kind", "graph", "--restart-at", "now", "--json"]
        command += ["--config", json.dumps(refunds.config), "--out", str(tmp_path / out), *more]
        return subprocess.run(command, capture_output=True, text=True, timeout=120)

    noted = run("noted")
    assert noted.returncode == 1, noted.stderr
    assert json.loads(noted.stdout)["outside"] == ["program:curl"]
    assert len(refunds.got) == 1
    declared = run("declared", "--harmless-program", "curl")
    assert declared.returncode == 0, declared.stdout + declared.stderr
    assert json.loads(declared.stdout)["spec"]["harmless_programs"] == ["curl"]


@pytest.mark.parametrize("names", [["/usr/bin/curl"], ["curl -X POST"], [""], [3], 3, None])
def test_harmless_programs_takes_names_of_programs_and_nothing_else(names):
    with pytest.raises(LabError, match=r"^harmless_programs takes the names of programs") as no:
        explore(target("curl_webhook"), "graph", harmless_programs=names)
    assert "\n" not in str(no.value)


def test_a_program_the_lab_starts_is_the_labs_and_each_other_is_noted(tmp_path):
    """The watch alone, in a process of its own: a program started by the lab's code (lab
    code that lists processes with `ps` where there is no /proc) is not noted, nor one the job
    declares harmless; every other is, by name, whichever way Python starts it, `os.execv`
    (which never returns) too, and from a thread whose stack is Python's own alone (an
    executor's, as `asyncio.to_thread` runs it)."""
    script = tmp_path / "starts.py"
    script.write_text(
        "import os, subprocess, sys\n"
        "from labkit.bench import leftovers\n"
        "from labkit.studies.explorer.programs import watch_programs\n"
        "class Noted:\n"
        "    job = {'harmless_programs': ['true']}\n"
        "    def note_outside(self, entry):\n"
        "        print(entry, flush=True)\n"
        "watch_programs(Noted())\n"
        "leftovers.group_members(os.getpgid(0))\n"
        "subprocess.run(['true'])\n"
        "subprocess.run(iter(['/bin/echo', 'a']), stdout=subprocess.DEVNULL)\n"
        "subprocess.run('echo b', shell=True, stdout=subprocess.DEVNULL)\n"
        "subprocess.run(['x'], executable='/usr/bin/env', stdout=subprocess.DEVNULL)\n"
        "from concurrent.futures import ThreadPoolExecutor\n"  # a stack of Python's own only
        "pool = ThreadPoolExecutor(1)\n"
        "pool.submit(subprocess.run, ['/bin/cat'], stdin=subprocess.DEVNULL).result()\n"
        "os.execv('/bin/sleep', ['sleep', '0'])\n"
    )
    environ = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1]), AS_ON_MACOS: "1"}
    done = subprocess.run(
        [sys.executable, str(script)], env=environ, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "program:echo",
        "program:sh",
        "program:env",
        "program:cat",
        "program:sleep",
    ]
