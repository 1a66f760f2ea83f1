"""Lesson 5's ticket service on a shared machine: 127.0.0.1 is open to every local user, so the
service answers only requests that carry its secret. A request without it, or with a wrong
one, is refused (403, traced) and writes no ticket; a stranger's fault header kills nothing;
another user can neither read the secret nor have a request served."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from labkit.bench.trace import TRACE_FILE, read_trace
from labkit.studies.unknown_outcome.caller import FAULT_HEADER, SECRET_FILE, SECRET_HEADER
from labkit.studies.unknown_outcome.experiment import KEY, TITLE, ServiceProcess
from tests.conftest import AS_ROOT, SEEN_AS

STRANGER = 4242  # another user of the machine, who found the port with `ss`
TICKET = json.dumps({"tenant": "t", "op_key": KEY, "title": TITLE})


def ask(
    port: int, headers: dict, method: str = "POST", path: str = "/tickets"
) -> tuple[int | None, dict]:
    """The service's status and JSON answer, or (None, {}) if it cut the connection without one."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, TICKET if method == "POST" else None, headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    except http.client.RemoteDisconnected:
        return None, {}
    finally:
        connection.close()


def refusals(service: ServiceProcess) -> list[str]:
    """Why each stranger was refused, as the service's trace says."""
    return [e["why"] for e in read_trace(service.folder) if e["event"] == "stranger refused"]


def test_a_request_without_the_secret_or_with_a_wrong_one_is_refused_and_writes_nothing(
    tmp_path,
):
    with ServiceProcess(tmp_path / "service") as service:
        refusal = {"error": "refused: no secret; this service answers only its own lab"}
        assert ask(service.port, {}) == (403, refusal)
        assert ask(service.port, {SECRET_HEADER: "0" * 64})[0] == 403
        assert ask(service.port, {}, "GET", f"/tickets?tenant=t&op_key={KEY}")[0] == 403
        assert service.tickets("t") == []
        assert ask(service.port, {SECRET_HEADER: service.secret})[0] == 200
        held = service.tickets("t")
        assert ask(service.port, {SECRET_HEADER: service.secret[::-1]})[0] == 403
        assert service.tickets("t") == held and len(held) == 1
        assert refusals(service) == ["no secret", "a wrong secret", "no secret", "a wrong secret"]
        command = Path(f"/proc/{service.worker.proc.pid}/cmdline").read_text()  # anyone's to read
        assert service.secret not in command + (service.folder / TRACE_FILE).read_text()


def test_a_fault_header_without_the_secret_kills_nothing(tmp_path):
    with ServiceProcess(tmp_path / "service") as service:
        assert ask(service.port, {FAULT_HEADER: "service_killed"})[0] == 403
        assert ask(service.port, {SECRET_HEADER: "x", FAULT_HEADER: "service_killed"})[0] == 403
        assert service.worker.proc.poll() is None and service.tickets("t") == []
        assert ask(service.port, {SECRET_HEADER: service.secret})[0] == 200  # still serving


STRANGER_CLIENT = """
import http.client, json, os, sys
port, folder = int(sys.argv[1]), sys.argv[2]
try:
    secret = open(os.path.join(folder, sys.argv[3])).read()
except OSError as error:
    secret = type(error).__name__
statuses = []
for headers in ({}, {"X-Labkit-Fault": "service_killed"}):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        body = json.dumps({"tenant": "t", "op_key": "mine", "title": "a stranger's"})
        connection.request("POST", "/tickets", body, headers)
        statuses.append(connection.getresponse().status)
    except (OSError, http.client.HTTPException) as error:
        statuses.append(type(error).__name__)
print(json.dumps({"secret": secret, "statuses": statuses}))
"""


def as_stranger(run_dir: Path, *args: str) -> dict:
    """Run STRANGER_CLIENT as user 4242, which sees `run_dir` (mode 0755) at /srv, in a mount
    namespace of its own; what it got back, as a dict."""
    if not AS_ROOT or not (shutil.which("unshare") and shutil.which("setpriv")):
        pytest.skip("needs root, unshare and setpriv to run a client as another user")
    run_dir.chmod(0o755)
    user = f"setpriv --reuid={STRANGER} --regid={STRANGER} --clear-groups"
    client = [sys.executable, "-I", "-c", STRANGER_CLIENT, *args]
    done = subprocess.run(
        [
            "unshare",
            "-m",
            "sh",
            "-c",
            f'mount --bind "$0" {SEEN_AS} || exit 97\ncd / && exec {user} "$@"',
            str(run_dir),
            *client,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode == 97:
        pytest.skip("this machine does not let us bind-mount a folder")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_another_user_cannot_read_the_secret_and_is_refused(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with ServiceProcess(run_dir / "service") as service:
        seen = as_stranger(run_dir, str(service.port), f"{SEEN_AS}/service", SECRET_FILE)
        assert seen == {"secret": "PermissionError", "statuses": [403, 403]}
        assert service.worker.proc.poll() is None and service.tickets("t") == []
        assert refusals(service) == ["no secret", "no secret"]
    assert os.stat(run_dir / "service" / SECRET_FILE).st_mode & 0o777 == 0o600
