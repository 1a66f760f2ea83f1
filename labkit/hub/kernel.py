"""Run code in a kernel of a participant's server, as JupyterLab does: the server's REST API
starts the kernel, its websocket carries execute requests and the outputs back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from dataclasses import dataclass, field

from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from labkit.bench.errors import LabError, refusal
from labkit.hub.client import call

CELL_TIMEOUT = 600.0
CONNECT_TIMEOUT = 180.0  # tornado's 20 s was too short for a room of 20 on two busy cores


@dataclass
class Ran:
    """One cell's run: its text outputs, its error (ename: evalue) if any, its seconds."""

    text: str = ""
    error: str | None = None
    seconds: float = 0.0
    outputs: list[dict] = field(default_factory=list)


async def connect(request: HTTPRequest):
    """The websocket, made inside the kernel's own event loop (tornado binds it to the one
    running)."""
    return await websocket_connect(request)


class RemoteKernel:
    """A python3 kernel on the server at `server_url` (…/user/NAME/), reached with `token`.
    Use it from one thread; close() shuts the kernel down."""

    def __init__(self, server_url: str, token: str) -> None:
        self.server_url, self.token = server_url, token
        _, answer = call("POST", f"{server_url}api/kernels", {"name": "python3"}, token=token)
        self.id, self.session = answer["id"], uuid.uuid4().hex
        self.loop = asyncio.new_event_loop()
        ws_url = f"{server_url.replace('http', 'ws', 1)}api/kernels/{self.id}/channels"
        request = HTTPRequest(
            ws_url, headers={"Authorization": f"token {token}"},
            connect_timeout=CONNECT_TIMEOUT, request_timeout=CONNECT_TIMEOUT,
        )  # fmt: skip
        self.socket = self.loop.run_until_complete(connect(request))

    def run(self, code: str, timeout: float = CELL_TIMEOUT) -> Ran:
        return self.loop.run_until_complete(asyncio.wait_for(self._run(code), timeout))

    async def _run(self, code: str) -> Ran:
        msg_id, began, ran = uuid.uuid4().hex, time.monotonic(), Ran()
        header = {"msg_id": msg_id, "msg_type": "execute_request", "username": "workshop",
                  "session": self.session, "date": "", "version": "5.3"}  # fmt: skip
        content = {"code": code, "silent": False, "store_history": True,
                   "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}  # fmt: skip
        message = {"header": header, "parent_header": {}, "metadata": {}, "content": content,
                   "channel": "shell", "buffers": []}  # fmt: skip
        await self.socket.write_message(json.dumps(message))
        idle = replied = False
        while not (idle and replied):
            raw = await self.socket.read_message()
            if raw is None:
                raise refusal("hub_kernel_closed")
            if isinstance(raw, bytes):  # a binary frame (widgets' buffers): not a reply
                continue
            reply = json.loads(raw)
            if reply.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, body = reply["msg_type"], reply["content"]
            if kind == "status" and body.get("execution_state") == "idle":
                idle = True
            elif kind == "execute_reply":
                replied = True
            elif kind == "stream":
                ran.text += body["text"]
            elif kind in ("execute_result", "display_data"):
                ran.outputs.append(body)
                ran.text += body.get("data", {}).get("text/plain", "") + "\n"
            elif kind == "error":
                ran.error = f"{body['ename']}: {body['evalue']}"
        ran.seconds = time.monotonic() - began
        return ran

    def close(self) -> None:
        self.socket.close()
        with contextlib.suppress(LabError):  # the server has gone already
            call("DELETE", f"{self.server_url}api/kernels/{self.id}", token=self.token)
        self.loop.close()
