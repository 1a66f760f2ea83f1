"""labkit's trial server: a clean helper process that imports LangGraph once and forks workers.

LangGraph's import costs about 1.4 s; a study-004 matrix needs 48 worker processes. The
kernel (or the CLI) starts this server once, sends it calls as JSON lines on its stdin, and
reads progress and results as JSON lines on its stdout. Inside the server, workers are forks
of it, made ahead of time (`labkit.bench.spares`): a worker starts the moment it gets its job. The
kernel itself never forks and never imports LangGraph.

Nothing outlives its caller: the server dies with the process that started it, and its spares
and workers with it (`portable.die_with`); what a worker's code starts ends with the worker
(`leftovers`); a Ctrl-C while it starts kills it; it ends quietly when its caller closes the pipe
or stops reading.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import importlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import TextIO

from labkit.bench import launcher, spares
from labkit.bench.ctrl_c import ctrl_c_held
from labkit.bench.errors import LabError, RunFailed, refusal
from labkit.bench.folders import holds_run_dirs, runs_home, temp_dir
from labkit.bench.leftovers import become_subreaper
from labkit.bench.portable import die_with
from labkit.bench.reply_lines import ReplyLines
from labkit.bench.server_errors import ServerError, as_error, error_message

__all__ = ["ServerError", "call", "call_on", "serve", "stop"]

# What the server does before it forks anything: import LangGraph and the graph modules (which
# compile their graphs as they load), then run the durability graphs once (`warm_up`).
PRELOAD = (
    "labkit.studies.interrupt_resume.graphs",
    "labkit.studies.outbox.graph",
    "labkit.studies.leases.graph",
    "labkit.studies.explorer.worker",  # lesson 9's crash explorer: its graphs' workers
    "labkit.studies.explorer.graphs",
    "labkit.studies.explorer.callables",
    "labkit.studies.durability.graphs:warm_up",
    "labkit.studies.postgres.workers",  # psycopg: lesson 7's workers connect to Postgres
    "langgraph.checkpoint.postgres",  # lesson 7's PostgresSaver
    "labkit.studies.retries.warm:warm_up",
)
# Preloaded only where the lab's extras are installed: a project that installs labkit for the
# explorer alone (`pip install labkit`, no `[lab]`) has no psycopg and no Postgres saver.
NEEDS_LAB_EXTRAS = {"labkit.studies.postgres.workers", "langgraph.checkpoint.postgres"}
# The light server: the same loop, for workers of the standard library alone (the crash
# explorer's steps). Without LangGraph in it, a fork costs well under a millisecond, not ten.
LIGHT_PRELOAD = ("labkit.studies.explorer.worker", "labkit.studies.explorer.steps")
PRELOADS = {"trial": PRELOAD, "light": LIGHT_PRELOAD}
# The server's command line (after `isolated_python`): labkit's folder, the caller's pid, which
# server it is (a key of PRELOADS).
SERVER_MAIN = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from labkit.bench.server import serve; serve(int(sys.argv[2]), sys.argv[3])"
)
EXITED = "labkit's trial server exited"


LITTLE_ROOM = 1 << 20  # bytes: a temp directory with less free than this is full for a warm-up
TAIL = 1 << 16  # bytes of the server's stderr read back for its last line


def serve(caller: int, kind: str = "trial") -> None:
    """The server's loop: one call at a time; Ctrl-C (SIGINT) interrupts the current call only.
    It ends when the `caller` process ends or closes its end of the pipes, leaving nothing."""
    die_with(caller)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # let through by interruptible()
    for entry in PRELOADS[kind]:
        if entry in NEEDS_LAB_EXTRAS and importlib.util.find_spec("psycopg") is None:
            continue
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
    launcher.ADOPTING = become_subreaper()  # what a worker leaves comes to us once it has ended
    reply = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # stray prints must not corrupt the replies
    try:
        spares.refill()  # after that: a spare must not hold the reply pipe
        write_line(reply, {"ready": os.getpid()})
        answer_calls(reply)
    except BrokenPipeError:  # the caller stopped reading: there is no one to tell
        os.dup2(os.open(os.devnull, os.O_WRONLY), reply.fileno())  # nor at exit, when it flushes
    finally:
        launcher.kill_all_workers()
        spares.drop()


def answer_calls(reply: TextIO) -> None:
    """Run each call that comes on stdin, until end-of-file (the caller closed the pipe)."""
    for line in sys.stdin:
        request = json.loads(line)

        def progress(done: int, total: int, item: object) -> None:
            write_line(reply, {"progress": [done, total, to_json(item)]})

        try:
            call = functools.partial(call_named, request, progress)
            message = {"result": to_json(interruptible(call, request["stale_interrupt"]))}
        except KeyboardInterrupt:
            message = cleaned_up({"interrupted": True})
        except Exception as error:
            message = cleaned_up(error_message(error))
        write_line(reply, message)


def cleaned_up(message: dict) -> dict:
    """`message`, once the failed call's workers are killed and reaped; if one could not be,
    that error instead: the caller hears of it, and the server lives on for the next call."""
    try:
        launcher.kill_all_workers()
    except Exception as error:
        return error_message(error)
    return message


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
    try:  # one pending already (the reader was quick) is raised as it is let through: held after
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        return call()
    finally:  # a SIGINT that came in the meantime raises KeyboardInterrupt here
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def write_line(stream: TextIO, message: dict) -> None:
    """One reply as one whole JSON line: a Ctrl-C waits until the line is written."""
    with ctrl_c_held():
        stream.write(json.dumps(message) + "\n")


def to_json(value: object) -> object:
    """Results cross the pipe as JSON: objects that know how give `to_json()`."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    return value


class Server:
    """The client's handle on one running server process. The server dies with the thread that
    started it (in a kernel or the CLI: the main thread, which lives as long as they do)."""

    def __init__(self, kind: str = "trial") -> None:
        runs_home()  # the server's warm-up makes a folder there: a bad home is the caller's error
        self.lock = threading.Lock()
        self.stale_interrupt = False
        # The server's stderr is kept, not shown: a traceback there is turned into one line. It
        # is kept in memory (a memfd), where a full temp directory cannot stop it.
        self.stderr = os.fdopen(os.memfd_create("labkit-server-stderr"), "w+b")
        command = launcher.isolated_python(
            "-c", SERVER_MAIN, launcher.LABKIT_ROOT, str(os.getpid()), kind
        )
        self.process: subprocess.Popen | None = None
        try:
            with ctrl_c_held():  # a Ctrl-C meanwhile waits until the process is ours to kill
                self.process = subprocess.Popen(
                    command,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=self.stderr,
                    text=True,
                    bufsize=1,
                    start_new_session=True,
                    cwd="/",  # it holds no folder of the caller's; a worker runs in its run folder
                )
                self.replies = ReplyLines(self.process.stdout.fileno())  # never read otherwise
            if not self._ready():  # a second or two: time for a Ctrl-C
                self.process.wait()
                raise self.start_failure()
        except BaseException:
            if self.process is None:  # Popen itself failed: no process to kill
                self.stderr.close()
            else:
                self.kill()
            raise

    def _ready(self) -> bool:
        """Wait for the server's first line ("ready"): False if it exited first. A Ctrl-C
        meanwhile is raised at once (`ReplyLines`), even from a server that hangs in its start."""
        return bool(self.replies.next())

    def last_words(self) -> str:
        """The last line the server wrote on stderr: after a traceback, the error itself."""
        fd = self.stderr.fileno()
        tail = os.pread(fd, TAIL, max(os.fstat(fd).st_size - TAIL, 0))
        lines = tail.decode(errors="replace").splitlines()
        return next((line for line in reversed(lines) if line.strip()), "")

    def start_failure(self) -> Exception:
        """Why the server did not start, as one line: a full temp directory (its warm-up writes
        there), a LabError of the server's (such as a temp directory too deep), or its error."""
        last = self.last_words() or f"it exited with status {self.process.returncode}"
        error = as_error(last, "labkit's trial server did not start")
        home = temp_dir()
        space = os.statvfs(home)
        no_inodes = space.f_files > 0 and space.f_favail == 0  # some file systems count none
        if isinstance(error, ServerError) and (
            space.f_bavail * space.f_frsize < LITTLE_ROOM or no_inodes
        ):
            return refusal("temp_full", folder=str(home), last=last)
        return error

    def call(self, function: str, kwargs: dict, progress: Callable | None = None) -> object:
        with self.lock:
            request = {
                "function": function,
                "kwargs": kwargs,
                "progress": progress is not None,
                "stale_interrupt": self.stale_interrupt,
            }
            self.stale_interrupt = False
            try:
                self.process.stdin.write(json.dumps(request) + "\n")
                self.process.stdin.flush()
            except BrokenPipeError:
                self.kill()
                raise ServerError(EXITED) from None
            except BaseException:  # a request cut short: no answer can be trusted to come
                self.kill()
                raise
            try:
                answer = self._answer(progress)
            except BaseException:  # Ctrl-C, or the caller's progress failed: stop the call too
                self._stop_call()
                raise
            if "error" in answer:
                error = as_error(answer["error"], "")
                if isinstance(error, LabError | RunFailed) and "said" in answer:
                    error.code, error.fields = answer["said"]
                raise error
            if "interrupted" in answer:
                raise KeyboardInterrupt
            return answer["result"]

    def _answer(self, progress: Callable | None) -> dict:
        """Pass progress reports on until the call's answer: result, error or interrupted."""
        self.replies.last = ""
        while line := self.replies.next():  # a Ctrl-C after it finds it kept (`replies.last`)
            message = json.loads(line)
            if "progress" not in message:
                return message
            if progress:
                progress(*message["progress"])
        last = self.last_words()  # written before its pipes closed, as it exited
        raise ServerError(f"{EXITED}: {last}" if last else EXITED)

    def _stop_call(self) -> None:
        """Interrupt the server's call and read its answer, so that the next call starts in step.
        If it had answered first, the SIGINT waits in the server: the next call says so
        (`stale_interrupt`). If no answer comes (a second Ctrl-C, or the server died), kill it:
        the next call starts a new one. If its answer was read already (the Ctrl-C came as it
        was decoded), the call is over: there is nothing to interrupt."""
        if self.replies.last and not self.replies.last.startswith('{"progress"'):
            return
        try:
            self.process.send_signal(signal.SIGINT)
            answer = self._answer(None)
        except BaseException:
            self.kill()
            return
        self.stale_interrupt = "interrupted" not in answer

    def stop(self) -> None:
        """Close the server's stdin, so that it ends its spares and exits; kill it if it has not
        within 10 s, or if a Ctrl-C comes meanwhile (say, as the CLI exits). Either way its
        pipes are closed and it is reaped."""
        with contextlib.suppress(OSError):  # a dead server's pipe: nothing to flush into
            self.process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired, KeyboardInterrupt):
            self.process.wait(timeout=10)
        self.kill()

    def kill(self) -> None:
        """SIGKILL the server (its spares and workers die with it), close its pipes, reap it."""
        if self.process.returncode is None:  # not reaped yet: the pid is still its own
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
        for pipe in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                pipe.close()
        self.process.wait()
        self.stderr.close()


_server: Server | None = None  # the trial server, once started
_light: Server | None = None  # the light one (standard-library workers), once started
_starting = threading.Lock()  # a panel's job (its own thread) and a cell may call at once


def call(function: str, progress: Callable | None = None, **kwargs: object) -> object:
    """Run `module:function(**kwargs)` in the trial server (started on first use) and return
    its JSON result; `progress(done, total, item)` is called as the server reports."""
    return call_on("trial", function, progress, **kwargs)


def call_on(kind: str, function: str, progress: Callable | None = None, **kwargs: object) -> object:
    """`call`, in the server of that kind: "trial", or "light" (standard-library workers)."""
    global _server, _light
    with _starting:
        server = _server if kind == "trial" else _light
        if server is None or server.process.poll() is not None:
            if server is not None:
                server.stop()  # a dead server's pipes are closed
            server = Server(kind)
            if kind == "trial":
                _server = server
            else:
                _light = server
    return server.call(function, kwargs, progress)


def stop() -> None:
    """Stop the servers that run (they are also stopped when this process exits)."""
    for server in (_server, _light):
        if server is not None:
            server.stop()


atexit.register(stop)  # one handler, whichever server runs at the end
