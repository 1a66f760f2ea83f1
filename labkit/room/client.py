"""A participant's kernel talking to the room: their prediction before a crash, the outcome
their run produced, the crash point the instructor pushed.

Only under the workshop hub, which gives the kernel its server's token
($JUPYTERHUB_API_TOKEN, scoped to this service and nothing more of the user's) and the room's
address ($LABKIT_ROOM_URL, on 127.0.0.1). Anywhere else every function returns at once and
opens no connection. The room is a help, never a need: a room that does not answer costs a
lesson at most TIMEOUT seconds and changes nothing it shows.
"""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request

URL = "LABKIT_ROOM_URL"  # set by the hub for every participant's server (hub/services.py)
TIMEOUT = 3.0


def room_url() -> str | None:
    """The room's address when this kernel runs under the workshop hub, else None."""
    url = os.environ.get(URL)
    under_hub = os.environ.get("JUPYTERHUB_API_TOKEN") and os.environ.get("JUPYTERHUB_USER")
    return url.rstrip("/") + "/" if url and under_hub else None


def call(path: str, body: dict | None = None) -> dict | None:
    """One request to the room with this participant's token; None if not under the hub or
    the room did not answer."""
    url = room_url()
    if url is None:
        return None
    data = None if body is None else json.dumps(body).encode()
    headers = {
        "Authorization": f"token {os.environ['JUPYTERHUB_API_TOKEN']}",
        "Content-Type": "application/json",
    }
    request = urllib.request.Request(url + path, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            return json.loads(answer.read() or b"{}")
    except (OSError, ValueError):  # urllib's errors are OSErrors: the lesson goes on
        return None


def predict(point: dict, answer: str) -> bool:
    """Send this participant's prediction for `point` ({order, kill_at, kill_mode})."""
    return call("api/predictions", {**point, "answer": answer}) is not None


def report(point: dict, outcome: str) -> bool:
    """Send the outcome this participant's run of `point` produced."""
    return call("api/outcomes", {**point, "answer": outcome}) is not None


def pushed_point() -> dict | None:
    """The crash point the instructor pushed ({order, kill_at, kill_mode}), or None."""
    answer = call("api/mine")
    return answer.get("next") if answer else None


def predict_exercise(exercise: str, answers: dict[str, object]) -> threading.Thread | None:
    """Send this participant's predictions for an exercise's cases ({case: answer, as its
    form read it}), in a thread of its own: the check that calls it never waits for the room.
    None (and nothing sent) when not under the hub."""
    if room_url() is None or not answers:
        return None
    body = {"exercise": exercise, "answers": {str(k): str(v) for k, v in answers.items()}}
    sending = threading.Thread(target=call, args=("api/exercises", body), daemon=True)
    sending.start()
    return sending
