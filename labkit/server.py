"""labkit's trial server: a clean helper process that imports LangGraph once and forks workers.

LangGraph's import costs about 1.4 s; a study-004 matrix needs 48 worker processes. The
kernel (or the CLI) starts this server once, sends it calls as JSON lines on its stdin, and
reads progress and results as JSON lines on its stdout. Inside the server, workers are forks
of it, made ahead of time (`labkit.spares`): a worker starts the moment it gets its job. The
kernel itself never forks and never imports LangGraph.
"""

from __future__ import annotations

import atexit
import functools
import gc
import importlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import TextIO

from labkit import launcher, spares
from labkit.folders import holds_run_dirs, runs_home

__all__ = ["ServerError", "call", "serve", "stop"]

# What the server does before it forks anything: import LangGraph and the graph modules (which
# compile their graphs as they load), then run the durability graphs once (`warm_up`).
PRELOAD = ("labkit.interrupt_graphs", "labkit.graphs:warm_up")


class ServerError(RuntimeError):
    """A call failed inside the trial server; the message is the server's own error line."""


def serve() -> None:
    """The server's loop: one call at a time; Ctrl-C (SIGINT) interrupts the current call only."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # let through by interruptible()
    for entry in PRELOAD:
        module, _, function = entry.partition(":")
        loaded = importlib.import_module(module)
        if function:
            getattr(loaded, function)()
    if threading.active_count() != 1:  # a fork copies only the forking thread: locks could hang
        raise ServerError(f"the trial server must not fork with threads: {threading.enumerate()}")
    # Everything alive now is shared with every worker. Frozen, the workers' garbage collector
    # leaves it alone instead of writing to its pages, which would copy them (copy-on-write).
    gc.freeze()
    launcher.FORKING_ALLOWED = True
    reply = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # stray prints must not corrupt the replies
    spares.refill()  # after that: a spare must not hold the reply pipe
    write_line(reply, {"ready": os.getpid()})
    for line in sys.stdin:
        request = json.loads(line)

        def progress(done: int, total: int, item: object) -> None:
            write_line(reply, {"progress": [done, total, to_json(item)]})

        try:
            call = functools.partial(call_named, request, progress)
            message = {"result": to_json(interruptible(call, request["stale_interrupt"]))}
        except KeyboardInterrupt:
            launcher.kill_all_workers()
            message = {"interrupted": True}
        except Exception as error:  # the caller gets it as a ServerError with this text
            launcher.kill_all_workers()
            message = {"error": f"{type(error).__name__}: {error}"}
        write_line(reply, message)
    spares.drop()  # the caller closed the pipe: no more calls will come


def call_named(request: dict, progress: Callable) -> object:
    """Call the request's `module:function` with its arguments (and `progress`, if asked)."""
    module, name = request["function"].split(":")
    function = holds_run_dirs(getattr(importlib.import_module(module), name))  # until it returns
    return function(**request["kwargs"], **({"progress": progress} if request["progress"] else {}))


def interruptible(call: Callable[[], object], stale_interrupt: bool) -> object:
    """Run `call` with Ctrl-C (SIGINT) let through. The rest of the time the server holds it
    back, so that it never lands while a spare is being forked or between a call's end and its
    reply. A Ctrl-C that reached the server after its call had answered waits here, held; the
    caller knows (it got a reply where it expected "interrupted") and says `stale_interrupt`:
    that one is dropped rather than turned against the next call."""
    if stale_interrupt and signal.SIGINT in signal.sigpending():
        signal.sigwait({signal.SIGINT})
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        return call()
    finally:  # a SIGINT that came in the meantime raises KeyboardInterrupt here
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def write_line(stream: TextIO, message: dict) -> None:
    """One reply as one whole JSON line: a Ctrl-C waits until the line is written."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        stream.write(json.dumps(message) + "\n")
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def to_json(value: object) -> object:
    """Results cross the pipe as JSON: objects that know how give `to_json()`."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    return value


class Server:
    """The client's handle on one running server process."""

    def __init__(self) -> None:
        runs_home()  # the server's warm-up makes a folder there: a bad home is the caller's error
        command = [sys.executable, "-c", "from labkit.server import serve; serve()"]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
            start_new_session=True,
        )
        self.lock = threading.Lock()
        self.stale_interrupt = False
        hello = self.process.stdout.readline()
        if not hello:
            raise ServerError("labkit's trial server did not start (see the output above)")

    def call(self, function: str, kwargs: dict, progress: Callable | None = None) -> object:
        with self.lock:
            request = {
                "function": function,
                "kwargs": kwargs,
                "progress": progress is not None,
                "stale_interrupt": self.stale_interrupt,
            }
            self.stale_interrupt = False
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            try:
                return self._read_until_done(progress)
            except KeyboardInterrupt:  # stop the server's call too, and wait until it says so
                self.process.send_signal(signal.SIGINT)
                try:
                    self._read_until_done(None)
                except KeyboardInterrupt:
                    raise  # it stopped
                except ServerError:
                    pass
                self.stale_interrupt = True  # it had answered first: the signal waits there
                raise

    def _read_until_done(self, progress: Callable | None) -> object:
        for line in self.process.stdout:
            message = json.loads(line)
            if "progress" in message:
                if progress:
                    progress(*message["progress"])
            elif "result" in message:
                return message["result"]
            elif "error" in message:
                raise ServerError(message["error"])
            elif "interrupted" in message:
                raise KeyboardInterrupt
        raise ServerError("labkit's trial server exited")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


_server: Server | None = None


def call(function: str, progress: Callable | None = None, **kwargs: object) -> object:
    """Run `module:function(**kwargs)` in the trial server (started on first use) and return
    its JSON result; `progress(done, total, item)` is called as the server reports."""
    global _server
    if _server is None or _server.process.poll() is not None:
        _server = Server()
        atexit.register(_server.stop)
    return _server.call(function, kwargs, progress)


def stop() -> None:
    """Stop the trial server, if one runs (it is also stopped when this process exits)."""
    if _server is not None:
        _server.stop()
