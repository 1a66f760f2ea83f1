"""labkit's fork server: where the standard-library workers of lessons 1, 2 and 5 are forked.

A fresh `python -I -S` costs a worker 20–55 ms of CPU before its first step: the interpreter,
then `sqlite3` and `json` (whose `re` and `enum` alone take 10 ms). A sweep starts hundreds.
Forked from a process that imported them once, a worker costs about a millisecond.

The caller (a kernel, the CLI, which never fork themselves) starts fork servers: each a clean
`python -I -S` that imports the workers' modules and keeps spares (`labkit.bench.spares`). It
asks for each worker on a Unix socket:
- a start: a spare takes the job; the reply is its pid, with the caller's ends of its notify
  and resume pipes passed along as descriptors (SCM_RIGHTS);
- a reap, once the caller has seen the worker end (its pidfd): the reply is its exit status.

The server reaps nothing unasked, so a worker's pid stays its own (a zombie at worst) until
its caller has reaped it: a SIGKILL of its group can never reach a stranger that took the pid.
The server ends when its caller closes the socket or dies (which closes it too), and its spares
and workers die with it. Not a death signal (`portable.die_with`): Linux sends that when the
thread that started the process ends, and a sweep's threads, which may start it, come and go.
A worker runs in its caller's environment as it is at the worker's start, sent along with its
job. Two servers take turns within a run folder, so that a recovery has another hash seed than
the worker before it (`start_worker`). Linux only: elsewhere, and where the caller asks for
macOS's ways (`portable.linux_now`), these workers start fresh.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import json
import os
import socket
import subprocess
import threading

from labkit.bench import spares
from labkit.bench.ctrl_c import ctrl_c_held
from labkit.bench.forked_child import ForkedChild
from labkit.bench.python_command import WORKER_PATH, isolated_python
from labkit.bench.server_errors import ServerError

__all__ = ["ServedChild", "serve", "server_pids", "start_worker"]

# What the server imports before it forks: the workers' modules, and so what they import.
PRELOAD = (
    "labkit.studies.commit_window.worker",
    "labkit.studies.commit_window.tool_steps",
    "labkit.studies.commit_window.expiring",
    "labkit.studies.unknown_outcome.caller",
    "labkit.studies.unknown_outcome.service",
    "labkit.studies.outbox.producer",
    "labkit.studies.outbox.relay",
    "labkit.studies.outbox.consumer",
)
# After `isolated_python("-S", "-c", ...)`: the socket's descriptor, then the path entries a
# fresh worker's command line puts first (`python_command.FRESH_MAIN`).
SERVER_MAIN = (
    "import sys; fd, *path = sys.argv[1:]; sys.path[:0] = path; "
    "from labkit.bench.fork_server import serve; serve(int(fd))"
)
MESSAGE = 1 << 20  # bytes: the largest request (a job with the reader's step as source)
REPLY = 256  # bytes: the largest reply (a pid or an exit status); a caller reads one per ask
EXITED = "labkit's fork server exited"


def serve(fd: int) -> None:
    """The server's loop: a start or a reap per message, until the caller's end is closed."""
    for module in PRELOAD:
        importlib.import_module(module)
    gc.freeze()  # as the trial server: the workers leave these pages shared
    connection = socket.socket(fileno=fd)
    spares.refill()
    connection.send(b"{}")  # ready
    while request := connection.recv(MESSAGE):
        answer(connection, json.loads(request))
    spares.drop()  # the workers still running die with this process


def answer(connection: socket.socket, request: dict) -> None:
    """Hand a spare its job and pass on its pid and pipe ends, or reap a worker that ended."""
    if "entry" in request:
        spare = spares.take()
        spare.hand(request["entry"], request["job"], request["environ"])
        reply = json.dumps({"pid": spare.pid}).encode()
        socket.send_fds(connection, [reply], [spare.notify_r, spare.resume_w])
        os.close(spare.notify_r)  # the caller's now
        os.close(spare.resume_w)
        spares.refill()
    else:
        pid, status = os.waitpid(request["reap"], os.WNOHANG)
        code = os.waitstatus_to_exitcode(status) if pid else None
        connection.send(json.dumps({"status": code}).encode())


class ForkServer:
    """The caller's handle on one fork server process."""

    def __init__(self) -> None:
        self.workers: set[int] = set()  # forked and not yet reaped
        self.lock = threading.Lock()  # one request at a time: a sweep's threads share it
        self.connection, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        command = isolated_python("-S", "-c", SERVER_MAIN, str(theirs.fileno()), *WORKER_PATH)
        with ctrl_c_held(), theirs:  # a Ctrl-C meanwhile waits until the process is ours
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                cwd="/",  # it holds no folder of the caller's; a worker runs in its run folder
                start_new_session=True,  # a Ctrl-C reaches the caller only
            )
        try:
            if not self.connection.recv(REPLY):
                raise ServerError(f"labkit's fork server did not start: {self.process.wait()}")
        except BaseException:
            self.stop()
            raise

    def ask(self, request: dict) -> tuple[dict, list[int]]:
        """One request, one reply, whole: a Ctrl-C waits (the server answers at once)."""
        with self.lock, ctrl_c_held():
            try:
                self.connection.send(json.dumps(request).encode())
                message, fds, _, _ = socket.recv_fds(self.connection, REPLY, 2)
            except OSError:
                message, fds = b"", []
        if not message:
            raise ServerError(EXITED)
        return json.loads(message), fds

    def stop(self) -> None:
        """Close the socket: the server ends its spares and exits (its workers die with it)."""
        self.connection.close()
        try:
            self.process.wait(timeout=10)
        except BaseException:
            self.process.kill()
            self.process.wait()


class ServedChild(ForkedChild):
    """A worker the fork server forked, seen through Popen's interface. It is the server's
    child, so the server reaps it when asked, and says its exit status. A stop (SIGSTOP) only
    its parent could see: the launcher kills and reaps it, as a fresh worker."""

    def __init__(self, pid: int, server: ForkServer) -> None:
        self.server = server
        super().__init__(pid)

    def _exit_code_if_ended(self) -> int | None:
        code = self.server.ask({"reap": self.pid})[0]["status"]
        if code is not None:
            self.server.workers.discard(self.pid)
        return code

    def freeze(self) -> bool:
        return False


_servers: list[ForkServer] = []  # the two that take turns, and one that died, still reaping
_last_in: dict[str, ForkServer] = {}  # a run folder → the server of its last worker
FOLDERS_KEPT = 256  # run folders remembered: a sweep's trials in flight, and more
_starting = threading.RLock()  # held by `fork_server_for` around `fork_server_here` too


def start_worker(entry: str, job: dict) -> tuple[ServedChild, int, int]:
    """A worker for `job`, forked by a fork server of this process: the worker (its pid yet
    unreaped), and the caller's ends of its notify and resume pipes.

    Two servers take turns within a run folder, each with the hash seed its own interpreter
    drew: a recovery runs with another seed than the worker before it, as after a real restart
    (a key made with `hash()` changes then, and a check must see it)."""
    server = fork_server_for(job["run_dir"])
    request = {"entry": entry, "job": job, "environ": dict(os.environ)}
    reply, (notify, resume) = server.ask(request)
    server.workers.add(reply["pid"])
    return ServedChild(reply["pid"], server), notify, resume


def fork_server_for(folder: str) -> ForkServer:
    """The fork server for the next worker in run folder `folder`: the one its last worker did
    not come from. Under one lock, as a sweep's threads start workers at once."""
    with _starting:
        server = fork_server_here(other_than=_last_in.pop(folder, None))
        _last_in[folder] = server
        if len(_last_in) > FOLDERS_KEPT:
            del _last_in[next(iter(_last_in))]  # the oldest
        return server


def fork_server_here(other_than: ForkServer | None = None) -> ForkServer:
    """A running fork server of this process, not `other_than`: one started now if there is
    none. One that died is let go once none of its workers is left to reap."""
    with _starting:
        for server in _servers:
            if server is not other_than and server.process.poll() is None:
                return server
        for dead in [s for s in _servers if not s.workers and s.process.poll() is not None]:
            _servers.remove(dead)
            dead.stop()
        _servers.append(ForkServer())
        return _servers[-1]


def server_pids() -> list[int]:
    """The pids of this process's fork servers, a dead one still reaping among them: the
    parents of its served workers."""
    return [server.process.pid for server in _servers]


@atexit.register
def stop() -> None:
    """Stop every fork server this process started."""
    _last_in.clear()
    while _servers:
        _servers.pop().stop()
