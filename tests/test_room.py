"""The instructor's view of the room, on a real hub: three participants (system users; one runs
the crash panel in her own kernel, the others answer through the REST API with their own
tokens), the instructor pushing the crash point and reading the room, in a real browser too.

Checked: predictions and outcomes arrive and count right, the pushed crash point is a
participant's panel's default, a participant reads only their own answers and never the room,
and outside the hub a panel opens no connection at all."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest

from labkit.bench.errors import LabError
from labkit.hub import passwords
from labkit.hub.client import Participant, Refused, call
from labkit.hub.kernel import RemoteKernel
from labkit.hub.services import ROOM_ACCESS
from labkit.hub.start import start
from labkit.language import set_language
from labkit.language.refusals import error_line
from labkit.room.app import DATABASE
from labkit.room.store import Room
from tests.conftest import NOBODY
from tests.hubs import hub_of, hub_settings

CHROMIUM = "/usr/bin/chromium"


def on_a_hub(test):
    """A test on the module's hub: as root (it makes system users), with npm (its proxy)."""
    for mark in (
        pytest.mark.skipif(os.geteuid() != 0, reason="the hub makes system users: root only"),
        pytest.mark.skipif(not shutil.which("npm"), reason="the hub's proxy comes from npm"),
        pytest.mark.timeout(900),
    ):
        test = mark(test)
    return test


PUSHED = {"order": "checkpoint_first", "kill_at": "checkpoint", "kill_mode": "exit"}
PUSHED_POINT = "checkpoint_first/checkpoint/exit"

PANEL_IN_THE_KERNEL = """
import json, os
from labkit.hub.client import call
from labkit.views.panel import CrashPanel
panel = CrashPanel()
default = [panel.order.value, panel.kill_at.value, panel.kill_mode.value]
panel.room.picker.value = "duplicate"
panel.click()
panel.job.wait(300)
me = call("GET", os.environ["JUPYTERHUB_API_URL"] + "/user",
          token=os.environ["JUPYTERHUB_API_TOKEN"])[1]
print(json.dumps({"default": default, "outcome": panel.result.outcome,
                  "note": panel.room.note.value, "scopes": sorted(me["scopes"])}))
"""


@pytest.fixture(scope="module")
def hub():
    with hub_of(f"roomt{os.getpid() % 100000}-", 3) as settings:
        yield settings


@pytest.fixture(scope="module")
def people(hub):
    """(instructor, a, b, c), each logged in through the REST API with their own token."""
    a, b, c = (Participant(hub.url, name) for name in hub.participants)
    for person in (a, b, c):
        person.log_in(passwords.participants_password(hub.folder))
    instructor = Participant(hub.url, hub.instructor)
    instructor.log_in(passwords.instructor_password(hub.folder))
    return instructor, a, b, c


def room(hub, method: str, path: str, person: Participant | None, body: object = None):
    token = person.token if person else ""
    return call(method, f"{hub.url}/services/room/{path}", body, token=token)[1]


def refused(hub, method: str, path: str, person: Participant | None, body: object = None):
    with pytest.raises(Refused) as no:
        room(hub, method, path, person, body)
    return no.value.status


def in_their_kernel(person: Participant, code: str):
    """`code` run in a kernel of the person's own server (started for it, stopped after)."""
    person.start_server()
    kernel = RemoteKernel(person.server_url, person.token)
    try:
        return kernel.run(code)
    finally:
        kernel.close()
        person.stop_server()


@on_a_hub
def test_the_room_counts_predictions_and_outcomes_and_the_pushed_point_is_the_default(hub, people):
    instructor, a, b, c = people
    assert room(hub, "POST", "api/next", instructor, PUSHED) == PUSHED
    ran = in_their_kernel(a, PANEL_IN_THE_KERNEL)
    assert ran.error is None, ran.text
    seen = json.loads(ran.text.strip().splitlines()[-1])
    assert seen["default"] == list(PUSHED.values())  # the instructor's point, not the panel's
    assert seen["outcome"] == "lost"  # checkpoint_first killed at checkpoint: the receipt lost
    others = [s for s in seen["scopes"] if s != ROOM_ACCESS]
    assert ROOM_ACCESS in seen["scopes"]  # the kernel's token reaches the room ...
    assert sorted(s.split("!")[0] for s in others) == [  # ... and nothing more of the user's
        "access:servers", "read:users:activity", "read:users:groups", "read:users:name",
        "users:activity",
    ]  # fmt: skip
    assert all(s.endswith((f"={a.name}", f"={a.name}/")) for s in others)
    room(hub, "POST", "api/predictions", b, {**PUSHED, "answer": "lost"})
    room(hub, "POST", "api/outcomes", b, {**PUSHED, "answer": "lost"})
    room(hub, "POST", "api/predictions", c, {**PUSHED, "answer": "duplicate"})
    room(hub, "POST", "api/predictions", c, {**PUSHED, "answer": "lost"})  # the last word counts
    view = room(hub, "GET", "api/room", instructor)
    assert view["next"] == PUSHED
    (point,) = view["points"]
    assert point["point"] == PUSHED_POINT
    assert point["predicted"] == {"duplicate": 1, "lost": 2}  # a: duplicate; b, c: lost
    assert point["happened"] == {"lost": 2}  # a's kernel and b's report
    assert room(hub, "GET", "api/mine", b)["next"] == PUSHED


@on_a_hub
def test_a_participant_reads_only_their_own_answers_and_never_the_room(hub, people):
    instructor, a, b, _ = people
    point = {"order": "effect_first", "kill_at": "effect", "kill_mode": "sigkill"}
    room(hub, "POST", "api/predictions", a, {**point, "answer": "consistent"})
    room(hub, "POST", "api/predictions", b, {**point, "answer": "duplicate"})
    mine = room(hub, "GET", "api/mine", b)
    assert mine["predictions"]["effect_first/effect/sigkill"] == "duplicate"
    assert "consistent" not in json.dumps(mine)  # nothing of a's in b's answers
    assert refused(hub, "GET", "api/room", b) == 403
    assert refused(hub, "POST", "api/next", b, point) == 403
    assert refused(hub, "GET", "", b) == 403  # the page too, token or not
    for path in ("api/room", "api/mine"):
        assert refused(hub, "GET", path, None) == 403  # no token: nobody
    assert room(hub, "GET", "api/room", instructor)["next"] != point


@on_a_hub
def test_the_page_speaks_the_instructors_language_and_refuses_an_unknown_one(hub, people):
    import urllib.error
    import urllib.request

    def page(query: str, accept: str) -> tuple[int, str]:
        headers = {"Authorization": f"token {people[0].token}", "Accept-Language": accept}
        asked = urllib.request.Request(f"{hub.url}/services/room/{query}", headers=headers)
        try:
            with urllib.request.urlopen(asked, timeout=30) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    assert "<h1>课堂</h1>" in page("", "zh-CN,zh;q=0.9,en;q=0.8")[1]
    assert "<h1>The room</h1>" in page("", "fr-FR,en;q=0.5")[1]
    assert "<h1>The room</h1>" in page("?lang=en", "zh-CN")[1]
    status, said = page("?lang=fr", "en")
    assert status == 400
    assert json.loads(said)["error"] == "unknown lang 'fr'; choose one of: en, zh"


def listening(port: int) -> list[str]:
    """The local addresses listening on TCP `port` (/proc/net/tcp and tcp6, hex as there)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.append(address)
    return found


@on_a_hub
def test_the_room_listens_on_127_0_0_1_only(hub, people):
    assert room(hub, "GET", "api/mine", people[1]) is not None  # it is up
    assert listening(hub.room_port) == ["0100007F"]  # 127.0.0.1, and no other address


@on_a_hub
@pytest.mark.parametrize(
    ("body", "line"),
    [
        ({**PUSHED, "answer": "maybe"}, "unknown prediction 'maybe'; choose one of: consistent"),
        ({**PUSHED, "kill_at": "nowhere", "answer": "lost"}, "unknown kill point for "),
        ({"order": "sideways", "answer": "lost"}, "unknown order 'sideways'; choose one of:"),
    ],
)
def test_bad_answers_are_one_line_naming_the_choices(hub, people, body, line):
    request_url = f"{hub.url}/services/room/api/predictions"
    import urllib.error
    import urllib.request

    headers = {"Authorization": f"token {people[1].token}"}
    asked = urllib.request.Request(request_url, json.dumps(body).encode(), headers)
    with pytest.raises(urllib.error.HTTPError) as no:
        urllib.request.urlopen(asked, timeout=30)
    assert no.value.code == 400
    assert json.load(no.value)["error"].startswith(line)


def test_outside_the_hub_a_panel_opens_no_connection(monkeypatch):
    from labkit.room import client
    from labkit.views.panel import CrashPanel

    for name in ("JUPYTERHUB_API_TOKEN", "JUPYTERHUB_USER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(client.URL, "http://127.0.0.1:9/services/room/")

    def no_network(*args: object) -> None:
        raise AssertionError("a connection outside the hub")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    panel = CrashPanel()
    assert panel.room.widgets == [] and client.room_url() is None
    assert not client.predict(PUSHED, "lost") and client.pushed_point() is None
    panel.room.before_run("effect_first", "effect", "exit")
    panel.room.after_run("duplicate")


@on_a_hub
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium")
def test_the_instructors_page_shows_the_room_live_in_a_real_browser(hub, people):
    from playwright.sync_api import expect, sync_playwright

    from tests.test_browser import CHROMIUM_ARGS

    instructor, a, b, c = people
    point = {"order": "atomic", "kill_at": "committed", "kill_mode": "exit"}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(f"{hub.url}/hub/login")
        page.fill("input[name=username]", hub.instructor)
        page.fill("input[name=password]", passwords.instructor_password(hub.folder))
        page.click("#login_submit")
        page.wait_for_url("**/hub/**")
        page.goto(f"{hub.url}/services/room/?lang=zh")  # through the hub's OAuth
        expect(page.locator("h1")).to_have_text("课堂")
        page.evaluate("window.notReloaded = true")
        row = page.locator('tr[data-point="atomic/committed/exit"]')
        expect(row).to_have_count(0)
        room(hub, "POST", "api/predictions", a, {**point, "answer": "consistent"})
        room(hub, "POST", "api/predictions", b, {**point, "answer": "consistent"})
        room(hub, "POST", "api/predictions", c, {**point, "answer": "lost"})
        expect(row.locator('[data-predicted="consistent"] .count')).to_have_text("2")
        expect(row.locator('[data-predicted="lost"] .count')).to_have_text("1")
        expect(row.locator('[data-predicted="lost"] .word')).to_have_text("丢失")
        room(hub, "POST", "api/outcomes", a, {**point, "answer": "consistent"})
        expect(row.locator('[data-happened="consistent"] .count')).to_have_text("1")
        room(hub, "POST", "api/predictions", c, {**point, "answer": "consistent"})
        expect(row.locator('[data-predicted="consistent"] .count')).to_have_text("3")
        expect(row.locator('[data-predicted="lost"]')).to_have_count(0)
        probe = {"exercise": "lesson3.predict_kills", "answers": {"paused": "1"}}
        room(hub, "POST", "api/exercises", a, probe)
        room(hub, "POST", "api/exercises", b, probe)
        room(hub, "POST", "api/exercises", c, {**probe, "answers": {"paused": "2"}})
        cell = page.locator('tr[data-case="lesson3.predict_kills|paused"]')
        expect(cell.locator('[data-answer="1"] .count')).to_have_text("2")
        expect(cell.locator('[data-answer="2"] .count')).to_have_text("1")
        markup = {**probe, "answers": {"paused": "<b>1</b>"}}
        assert refused(hub, "POST", "api/exercises", c, markup) == 400  # words, never markup
        page.select_option("#order", "idempotent")
        page.select_option("#kill_at", "effect")
        page.select_option("#kill_mode", "sigkill")
        page.click("#push")
        expect(page.locator("#pushed")).to_have_text("已推送")
        expect(page.locator("#next")).to_have_text("idempotent / effect / sigkill")
        assert page.evaluate("window.notReloaded") is True  # live, never reloaded
        browser.close()
    pushed = room(hub, "GET", "api/mine", c)["next"]
    assert pushed == {"order": "idempotent", "kill_at": "effect", "kill_mode": "sigkill"}


EXERCISE_IN_THE_KERNEL = """
import json
from labkit.workshop.answers import one_of
from labkit.workshop.checks import Exercise
from labkit.workshop.predictions import Measured, each, judge_predictions
measure = each(lambda case: Measured("kept", "", None))
judge = lambda given: judge_predictions(given, ["early", "late"], measure, one_of("kept", "lost"))
exercise = Exercise("lesson7.room_probe", "none.py", starter="", judge=judge)
print(json.dumps(exercise.check({"early": "Kept.", "late": "lost"}).status))
"""


def room_process(hub) -> int | None:
    """This hub's room service's pid (python -m labkit.room, run as labkit-hub), if it runs."""
    mine = f"LABKIT_ROOM_FOLDER={hub.room_folder}".encode()
    for entry in Path("/proc").iterdir():
        try:
            ours = entry.name.isdigit() and b"labkit.room" in (entry / "cmdline").read_bytes()
            if ours and mine in (entry / "environ").read_bytes().split(b"\0"):
                return int(entry.name)
        except OSError:
            continue
    return None


@on_a_hub
def test_an_exercises_predictions_reach_the_room_and_outlive_its_restart(hub, people):
    import signal
    import time

    instructor, _, b, _ = people
    ran = in_their_kernel(b, EXERCISE_IN_THE_KERNEL)
    assert ran.error is None and json.loads(ran.text.strip().splitlines()[-1]) == "incorrect"
    sent = {"lesson7.room_probe|early": "kept", "lesson7.room_probe|late": "lost"}
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # sent from a thread of its own: never waited for
        mine = room(hub, "GET", "api/mine", b)["exercises"]
        if sent.items() <= mine.items():
            break
        time.sleep(0.2)
    assert sent.items() <= mine.items()
    before = room(hub, "GET", "api/room", instructor)
    assert {"exercise": "lesson7.room_probe", "case": "late", "predicted": {"lost": 1}} in before[
        "exercises"
    ]
    database = hub.room_folder / "room.sqlite"
    assert oct(hub.room_folder.stat().st_mode & 0o777) == "0o700"
    assert oct(database.stat().st_mode & 0o777) == "0o600"
    first = room_process(hub)
    os.kill(first, signal.SIGKILL)  # the hub starts it again (it polls its services)
    deadline = time.monotonic() + 120
    after = None
    while after is None and time.monotonic() < deadline:
        try:
            after = room(hub, "GET", "api/room", instructor)
        except (Refused, OSError):
            time.sleep(0.5)
    assert room_process(hub) not in (None, first)
    assert after == before  # every answer, the pushed point and the version, as they were


def test_a_room_that_does_not_answer_never_holds_a_check_up(monkeypatch):
    import time

    from labkit.room import client

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()  # accepts the connection, never answers
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "t")
    monkeypatch.setenv("JUPYTERHUB_USER", "someone")
    monkeypatch.setenv(client.URL, f"http://127.0.0.1:{silent.getsockname()[1]}/services/room/")
    namespace: dict = {}
    began = time.monotonic()
    exec(EXERCISE_IN_THE_KERNEL.replace("print(", "status = ("), namespace)
    assert namespace["status"] == '"incorrect"' and time.monotonic() - began < 1.0
    silent.close()


@pytest.mark.parametrize(
    "environment",
    [{"LABKIT_ROOM_URL": "http://127.0.0.1:9/services/room/"},  # a room's address alone
     {"JUPYTERHUB_API_TOKEN": "t", "JUPYTERHUB_USER": "someone"}],  # another hub, no room
    ids=["address-without-the-hub", "a-hub-without-the-room"],
)  # fmt: skip
def test_outside_the_hub_a_predict_cell_sends_nothing(monkeypatch, environment):
    """Only under the workshop hub (its token, its user and the room's address) does an
    exercise's check send its predictions: anywhere else it opens no connection at all."""
    import threading

    from labkit.room import client

    for name in ("JUPYTERHUB_API_TOKEN", "JUPYTERHUB_USER", client.URL):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    tried: list[object] = []
    monkeypatch.setattr(socket.socket, "connect", lambda *args: tried.append(args[1:]))
    before = set(threading.enumerate())
    namespace: dict = {}
    exec(EXERCISE_IN_THE_KERNEL.replace("print(", "status = ("), namespace)
    for sending in set(threading.enumerate()) - before:  # a sender would be a thread of its own
        sending.join(5)
    assert namespace["status"] == '"incorrect"'
    assert client.predict_exercise("lesson7.room_probe", {"early": "kept"}) is None
    assert tried == []


def test_the_rooms_answers_are_kept_owner_only_and_read_back(tmp_path):
    from labkit.room.store import Room, exercise_case

    path = tmp_path / "room" / "room.sqlite"
    kept = Room(path)
    kept.predict("a", PUSHED_POINT, "lost")
    kept.report("a", PUSHED_POINT, "lost")
    kept.exercise("a", exercise_case("lesson3.predict_kills", "paused"), 1)
    kept.push(PUSHED_POINT)
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    again = Room(path)
    assert again.view() == kept.view() and again.mine("a") == kept.mine("a")
    assert again.mine("a")["exercises"] == {"lesson3.predict_kills|paused": "1"}


@on_a_hub
@pytest.mark.parametrize("language", ["en", "zh"])
def test_an_older_labkits_room_files_of_nobodys_are_refused_and_left_as_they_were(language):
    """An older labkit ran the room as nobody, whose files in its folder the room (now run as
    labkit-hub) cannot open, and nothing proves the room's: the hub starts nothing, takes over
    and removes nothing, and says in one line what to do, in the reader's language."""
    with hub_settings("roomold-", ["roomold-1"]) as settings:
        folder = settings.room_folder
        Room(folder / DATABASE).push(PUSHED_POINT)  # the room's answers, as it left them
        for path in (folder, folder / DATABASE):
            os.chown(path, NOBODY, NOBODY)
        before = as_it_is(folder)
        with pytest.raises(LabError) as refused:
            start(settings)
        assert as_it_is(folder) == before and folder.stat().st_uid == NOBODY
        assert not (settings.folder / "hub.log").exists()  # no hub started
    assert refused.value.code == "room_files_not_its_own"
    set_language(language)
    try:
        line = error_line(refused.value)
    finally:
        set_language("en")
    assert "\n" not in line and f"{folder}" in line
    assert all(word in line for word in (DATABASE, "nobody", "chown labkit-hub"))
    assert ("移出" in line) == (language == "zh")


def as_it_is(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    """Each file in `folder`: its owner, its mode and what it holds."""
    return {p.name: (p.stat().st_uid, p.stat().st_mode, p.read_bytes()) for p in folder.iterdir()}
