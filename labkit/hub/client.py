"""A participant's side of the hub, over its REST API only: log in with the workshop's
password (a token comes back), start their server, stop it.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

from labkit.bench.errors import LabError, refusal

READY_TIMEOUT = 300.0  # seconds, for a room whose servers all start at once on two cores
REQUEST_TIMEOUT = 180.0  # seconds: a kernel's start through a busy room's hub


class Refused(LabError):
    """The hub said no (a wrong password, a name not on the list): its HTTP status."""

    def __init__(self, status: int, what: str) -> None:
        said = refusal("hub_refused", request=what, status=status)
        super().__init__(str(said), said.code, **said.fields)
        self.status = status


def call(method: str, url: str, body: object = None, token: str = "") -> tuple[int, object]:
    """One JSON request; (status, answer). A status of 400 or more raises Refused."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"token {token}"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as answer:
            text = answer.read()
            return answer.status, json.loads(text) if text else None
    except urllib.error.HTTPError as error:
        raise Refused(error.code, f"{method} {url.split('?')[0]}") from None


class Participant:
    """One participant of the hub at `hub_url`, by name."""

    def __init__(self, hub_url: str, name: str) -> None:
        self.hub_url, self.name, self.token = hub_url.rstrip("/"), name, ""

    @property
    def api(self) -> str:
        return f"{self.hub_url}/hub/api/users/{self.name}"

    @property
    def server_url(self) -> str:
        return f"{self.hub_url}/user/{self.name}/"

    def log_in(self, password: str) -> str:
        """A token for this participant, asked with their name and password (the REST API's
        own login: POST /users/{name}/tokens with `auth`)."""
        auth = {"username": self.name, "password": password}
        _, answer = call("POST", f"{self.api}/tokens", {"auth": auth, "note": "workshop"})
        self.token = answer["token"]
        return self.token

    def me(self) -> dict:
        return call("GET", f"{self.hub_url}/hub/api/user", token=self.token)[1]

    def start_server(self, timeout: float = READY_TIMEOUT) -> float:
        """Start their server and wait until the hub says it is ready; the seconds it took."""
        began = time.monotonic()
        if not self.me().get("servers", {}).get(""):  # not running nor starting yet
            call("POST", f"{self.api}/server", {}, token=self.token)
        while time.monotonic() - began < timeout:
            server = self.me().get("servers", {}).get("", {})
            if server.get("ready"):
                return time.monotonic() - began
            time.sleep(0.5)
        raise refusal("hub_server_not_ready", name=self.name, seconds=f"{timeout:.0f}")

    def stop_server(self) -> None:
        call("DELETE", f"{self.api}/server", token=self.token)
