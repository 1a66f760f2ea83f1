"""Spare workers (`labkit.bench.spares`): forked ahead of time, they hold no pipe but their own.

Each test forks from a child Python of its own, never from pytest's process.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tests.conftest import forks_of, run_python


def test_a_spare_runs_its_job_and_its_exit_is_seen_while_other_spares_wait(tmp_path):
    seen = run_python(
        f"""
        import json, os, select
        from labkit.bench import spares

        def list_open_fds(job):
            print("hello from the spare")
            fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
            fds = [fd for fd in fds if os.path.exists(f"/proc/self/fd/{{fd}}")]  # not the listing
            own = [0, 1, 2, job["notify_fd"], job["resume_fd"]]
            with open(os.path.join(job["run_dir"], "w.json"), "w") as out:
                json.dump({{"fds": fds, "own": sorted(own)}}, out)

        first, second = spares.take(), spares.take()  # both forked now, both waiting
        job = {{"run_dir": {str(tmp_path)!r}, "role": "w"}}
        for stream in ("stdout", "stderr"):
            open(os.path.join(job["run_dir"], "w." + stream), "w").close()
        first.hand("__main__:list_open_fds", job)
        # end-of-file on the notify pipe although `second` lives: it does not hold that pipe
        ready = select.select([first.notify_r], [], [], 20)[0]
        eof = bool(ready) and os.read(first.notify_r, 64) == b""
        status = os.waitpid(first.pid, 0)[1]
        spares._ready.append(second)
        spares.drop()
        gone = not os.path.exists(f"/proc/{{second.pid}}")
        print(json.dumps({{"eof": eof, "status": status, "second_gone": gone}}))
        """
    )
    assert seen == {"eof": True, "status": 0, "second_gone": True}
    report = json.loads((tmp_path / "w.json").read_text())
    assert report["fds"] == report["own"]  # stdin, stdout, stderr, its notify and resume pipes
    assert (tmp_path / "w.stdout").read_text() == "hello from the spare\n"


def test_spares_exit_by_themselves_when_the_server_dies():
    pids = run_python(
        """
        import json, os, sys
        from labkit.bench import spares
        spares.refill()
        print(json.dumps([s.pid for s in spares._ready]))
        sys.stdout.flush()
        os._exit(0)  # as a SIGKILLed server would: no drop(), no goodbye
        """
    )
    assert len(pids) == 2
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(exited(pid) for pid in pids):
        time.sleep(0.05)
    assert all(exited(pid) for pid in pids)


def exited(pid: int) -> bool:
    """Gone, or a zombie waiting for a reaper that is not ours."""
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_the_trial_servers_spares_hold_neither_its_reply_pipe_nor_its_requests():
    from labkit.bench import server

    server_pid = server.call("os:getpid")
    client = server._server.process
    pipes = {os.readlink(f"/proc/self/fd/{f.fileno()}") for f in (client.stdin, client.stdout)}
    spares = forks_of(server_pid)
    deadline = time.monotonic() + 5  # a worker of the test before may still be on its way out
    while len(spares) > 2 and time.monotonic() < deadline:
        time.sleep(0.05)
        spares = forks_of(server_pid)
    assert len(spares) == 2  # waiting for the next trial's two workers
    for pid in spares:
        held = {os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()}
        assert not held & pipes
    server.stop()
    assert all(exited(pid) for pid in spares)


def test_a_worker_killed_without_waiting_for_its_teardown_writes_nothing_more_and_is_reaped(
    tmp_path,
):
    """`kill(reap=False)` returns once every thread of the worker has stopped (`freeze`): a
    thread that was writing writes nothing more; the kill is in the trace once, the worker is
    left to its teardown, and `close` reaps it."""
    seen = run_python(
        f"""
        import json, os, threading, time
        from pathlib import Path
        from labkit.bench import launcher
        from labkit.bench.gate import Gate
        from labkit.bench.trace import Trace, read_trace

        def writes_beside_a_pause(job):
            out = os.open(os.path.join(job["run_dir"], "grows"), os.O_WRONLY | os.O_CREAT)
            def write():
                while True:
                    os.write(out, b"x")
            threading.Thread(target=write, daemon=True).start()
            Gate(Trace(job["run_dir"], job["role"]), job)("paused")

        launcher.FORKING_ALLOWED = True
        run = Path({str(tmp_path)!r})
        worker = launcher.WorkerProcess(
            run, "w", "__main__:writes_beside_a_pause", {{}}, pause_at=("paused",),
            start_mode="fork",
        )
        with worker:
            assert worker.wait_for_pause() == "paused"
            time.sleep(0.05)  # the thread writes meanwhile
            frozen = worker.proc.freeze()  # what kill(reap=False) does before its SIGKILL
            size = os.path.getsize(run / "grows")
            time.sleep(0.2)
            grew = os.path.getsize(run / "grows") - size
            worker.kill(reap=False)
            pid = worker.proc.pid
            unreaped = Path(f"/proc/{{pid}}").exists()
        kills = [e for e in read_trace(run) if e["event"] == "kill"]
        print(json.dumps({{
            "grew": grew, "unreaped_before_close": unreaped, "kills": len(kills),
            "gone": not Path(f"/proc/{{pid}}").exists(), "code": worker.proc.returncode,
            "frozen": frozen,
            "killed_at": worker.killed_at,
        }}))
        """
    )
    assert seen == {
        "grew": 0,
        "unreaped_before_close": True,
        "kills": 1,
        "gone": True,
        "code": -9,
        "killed_at": "paused",
        "frozen": True,
    }
