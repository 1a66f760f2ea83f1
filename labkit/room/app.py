"""The room as a hub-managed JupyterHub service: every request authenticated by the hub
(HubOAuthenticated: a participant's token in the Authorization header, or the instructor's
browser through the hub's OAuth), served on 127.0.0.1 only, behind the hub's proxy at
/services/room/.

A participant writes their own answers and reads only their own (api/mine); the room's view
and the pushed crash point are the instructor's alone ($LABKIT_ROOM_INSTRUCTORS: the hub's
admins).
"""

from __future__ import annotations

import asyncio
import html
import json
import os
from pathlib import Path
from urllib.parse import urlsplit

from jupyterhub.services.auth import HubOAuthCallbackHandler, HubOAuthenticated
from jupyterhub.utils import url_path_join
from tornado import web

from labkit.bench.errors import LabError, check_choice, refusal
from labkit.language import LANGUAGES, catalogue, language
from labkit.room.page import room_page
from labkit.room.store import Room, crash_point, exercise_case

INSTRUCTORS = "LABKIT_ROOM_INSTRUCTORS"  # comma-separated names: the hub's admins
FOLDER = "LABKIT_ROOM_FOLDER"  # the room's own folder (0700): its answers survive a restart
DATABASE = "room.sqlite"
MAX_CASES = 40  # an exercise's cases in one post (lesson 2's checklist has 15)


class RoomHandler(HubOAuthenticated, web.RequestHandler):
    """Who is asking (or 403), their JSON body, errors as one line of JSON."""

    @property
    def room(self) -> Room:
        return self.settings["room"]

    def prepare(self) -> None:
        if self.current_user is None:
            raise web.HTTPError(403, "log in through the hub")

    @property
    def name(self) -> str:
        return self.current_user["name"]

    def need_instructor(self) -> None:
        if self.name not in self.settings["instructors"]:
            raise web.HTTPError(403, f"the room's view is the instructor's; not {self.name}'s")

    def body(self) -> dict:
        try:
            body = json.loads(self.request.body or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise web.HTTPError(400, "the body must be a JSON object")
        return body

    def point(self, body: dict) -> str:
        try:
            return crash_point(body.get("order"), body.get("kill_at"), body.get("kill_mode"))
        except LabError as error:
            raise web.HTTPError(400, str(error)) from None

    def write_error(self, status_code: int, **kwargs: object) -> None:
        error = kwargs.get("exc_info", (None, None))[1]
        line = getattr(error, "log_message", None) or self._reason
        self.finish({"error": line})


class Answers(RoomHandler):
    """A participant's own answer for a crash point: their prediction (`record` "predict")
    or their run's outcome ("report")."""

    def initialize(self, record: str) -> None:
        self.record = record

    def post(self) -> None:
        body = self.body()
        point = self.point(body)
        try:
            getattr(self.room, self.record)(self.name, point, body.get("answer"))
        except LabError as error:
            raise web.HTTPError(400, str(error)) from None
        self.finish({"point": point, "answer": body["answer"]})


class Exercises(RoomHandler):
    """A participant's predictions for an exercise's cases, sent by its check before the
    lab runs them: {"exercise": "lesson7.predict_crash", "answers": {case: answer}}."""

    def post(self) -> None:
        body = self.body()
        answers = body.get("answers")
        if not isinstance(answers, dict) or not 1 <= len(answers) <= MAX_CASES:
            raise web.HTTPError(400, f"answers must map 1 to {MAX_CASES} cases to an answer")
        try:
            cases = {exercise_case(body.get("exercise"), k): v for k, v in answers.items()}
            for case, answer in cases.items():
                self.room.exercise(self.name, case, answer)
        except LabError as error:
            raise web.HTTPError(400, str(error)) from None
        self.finish({"exercise": body["exercise"], "cases": len(cases)})


class Mine(RoomHandler):
    def get(self) -> None:
        self.finish(self.room.mine(self.name))


class View(RoomHandler):
    def get(self) -> None:
        self.need_instructor()
        self.finish(self.room.view())


class Next(RoomHandler):
    def post(self) -> None:
        self.need_instructor()
        point = self.point(self.body())
        self.room.push(point)
        self.finish(self.room.view()["next"])


class Page(RoomHandler):
    """The instructor's page, in ?lang=, else in the browser's language."""

    def prepare(self) -> None:  # no user yet: to the hub's login, then back here
        pass

    def browsers(self) -> str:
        """The first of the catalogue's languages the browser asks for (Accept-Language),
        else the service's own (LABKIT_LANGUAGE)."""
        for asked in self.request.headers.get("Accept-Language", "").split(","):
            code = asked.split(";")[0].strip().split("-")[0].lower()
            if code in LANGUAGES:
                return code
        return language()

    @web.authenticated
    def get(self) -> None:
        try:
            code = check_choice("lang", self.get_argument("lang", self.browsers()), LANGUAGES)
        except LabError as error:
            raise web.HTTPError(400, str(error)) from None
        self.set_header("Content-Type", "text/html; charset=utf-8")
        if self.name not in self.settings["instructors"]:
            self.set_status(403)
            self.finish(f"<p>{html.escape(catalogue(code)['room.not_yours'])}</p>")
            return
        token = self.xsrf_token
        self.finish(room_page(code, token.decode() if isinstance(token, bytes) else token))


def application(prefix: str, instructors: set[str], folder: Path | None = None) -> web.Application:
    """The room's routes under `prefix`; its answers kept in `folder` (else in memory)."""
    route = lambda path: url_path_join(prefix, path)  # noqa: E731
    return web.Application(
        [
            (prefix, Page),
            (route("oauth_callback"), HubOAuthCallbackHandler),
            (route("api/predictions"), Answers, {"record": "predict"}),
            (route("api/outcomes"), Answers, {"record": "report"}),
            (route("api/exercises"), Exercises),
            (route("api/mine"), Mine),
            (route("api/room"), View),
            (route("api/next"), Next),
        ],
        cookie_secret=os.urandom(32),
        room=Room(folder / DATABASE if folder else None),
        instructors=instructors,
    )


async def serve() -> None:
    """Listen where the hub said ($JUPYTERHUB_SERVICE_URL, 127.0.0.1) until stopped."""
    where = urlsplit(os.environ["JUPYTERHUB_SERVICE_URL"])
    if where.hostname != "127.0.0.1":
        raise refusal("room_not_local", host=where.hostname)
    instructors = {n for n in os.environ.get(INSTRUCTORS, "").split(",") if n}
    folder = Path(os.environ[FOLDER]) if os.environ.get(FOLDER) else None
    app = application(os.environ["JUPYTERHUB_SERVICE_PREFIX"], instructors, folder)
    app.listen(where.port, "127.0.0.1", xheaders=False)
    await asyncio.Event().wait()


def main() -> None:
    asyncio.run(serve())
