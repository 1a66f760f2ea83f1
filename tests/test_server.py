"""The trial server's handling of Ctrl-C (the protocol itself runs in every LangGraph test)."""

from __future__ import annotations

import os
import signal

import pytest

import labkit as lk
from labkit.bench import launcher, server
from labkit.studies.commit_window.runs import order_worker
from labkit.studies.commit_window.stores import create_files
from tests.conftest import processes_still_mentioning, run_python


def test_a_ctrl_c_that_came_after_its_call_answered_is_dropped_not_turned_on_the_next():
    seen = run_python(
        """
        import json, os, signal
        from labkit.bench.server import interruptible

        def late_ctrl_c():  # held back, as between two calls in the server
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            os.kill(os.getpid(), signal.SIGINT)

        late_ctrl_c()
        dropped = interruptible(lambda: "ran to its end", stale_interrupt=True)
        late_ctrl_c()
        try:
            interruptible(lambda: "ran to its end", stale_interrupt=False)
            kept = "ran to its end"
        except KeyboardInterrupt:
            kept = "interrupted"
        print(json.dumps([dropped, kept]))
        """
    )
    assert seen == ["ran to its end", "interrupted"]


REAPED_AS_CTRL_C_COMES = """
    import json, os, signal
    from labkit.bench.forked_child import ForkedChild

    real_waitpid = os.waitpid

    def waitpid_then_ctrl_c(*args):  # the reader's Ctrl-C, the moment a reap returns
        reaped = real_waitpid(*args)
        signal.raise_signal(signal.SIGINT)
        return reaped

    os.waitpid = waitpid_then_ctrl_c
    pid = os.fork()
    if pid == 0:
        {child}
    child = ForkedChild(pid)
    try:
        {parent}
    except KeyboardInterrupt:
        pass
    os.waitpid = real_waitpid
    child.send_signal(signal.SIGKILL)  # what the server's Ctrl-C handler does next
    print(json.dumps(child.poll()))
"""


def test_a_ctrl_c_as_a_worker_is_reaped_neither_loses_its_status_nor_fails_the_next_kill():
    """A worker's reap and its exit status are one step: a Ctrl-C right after `waitpid` (the
    server's call interrupted as a trial's worker ends) once lost the status, and the cleanup's
    SIGKILL then failed on the missing pid and took the trial server down."""
    ended = REAPED_AS_CTRL_C_COMES.format(child="os._exit(3)", parent="child.wait()")
    assert run_python(ended) == 3


def test_a_ctrl_c_as_a_worker_is_frozen_neither_loses_its_status_nor_fails_the_next_kill():
    exited = REAPED_AS_CTRL_C_COMES.format(
        child="os._exit(3)", parent="import time; time.sleep(0.2); child.freeze()"
    )
    assert run_python(exited) == 3


def test_a_ctrl_c_while_a_worker_is_closed_leaves_nothing_for_the_next_close_to_close_again(
    tmp_path,
):
    """The interrupted call's cleanup closes every worker again (`kill_all_workers`): a Ctrl-C
    between closing a worker's two pipe ends once left the second close an EBADF, which ended
    the trial server, or, with the number reused meanwhile, closed someone else's file."""
    closed_twice = run_python(
        f"""
        import json, os, signal
        from pathlib import Path
        import labkit as lk
        from labkit.studies.commit_window.runs import order_worker
        from labkit.studies.commit_window.stores import create_files

        folder = Path({str(tmp_path)!r})
        order = lk.get_order("atomic")
        create_files(folder, order.files, order.receiver_dedupes)
        worker = order_worker(lk.RunSpec("atomic"), folder, "first")
        worker.start()
        worker.wait()
        real_close = os.close

        def close_then_ctrl_c(fd):  # the reader's Ctrl-C, between the two pipe ends
            real_close(fd)
            os.close = real_close
            signal.raise_signal(signal.SIGINT)

        os.close = close_then_ctrl_c
        try:
            worker.close()
        except KeyboardInterrupt:
            pass
        os.close = real_close
        try:
            worker.close()  # as kill_all_workers does after the interrupted call
            print(json.dumps("closed once"))
        except OSError as error:
            print(json.dumps(f"closed again: {{error}}"))
        """
    )
    assert closed_twice == "closed once"


def test_a_ctrl_c_as_a_worker_is_reaped_still_ends_what_its_code_left_running(tmp_path):
    """What a worker's code left running is ended once the worker is reaped (`leftovers`): a
    Ctrl-C right after the reap once skipped that step, and the close of the interrupted
    call's cleanup, seeing the worker reaped, left its `sleep` running for good."""
    seconds = f"300{os.getpid()}"  # this test's own sleep
    step = (
        "import subprocess\n"
        "def step(control, effect, gate):\n"
        f"    subprocess.Popen(['sleep', '{seconds}'])\n"
    )
    run_python(
        f"""
        import json, signal
        from pathlib import Path
        import labkit as lk
        from labkit.studies.commit_window.runs import order_worker
        from labkit.studies.commit_window.stores import create_files

        folder = Path({str(tmp_path)!r})
        spec = lk.RunSpec("idempotent", step_source={step!r}, step_name="step")
        create_files(folder, spec.write_order.files, spec.write_order.receiver_dedupes)
        worker = order_worker(spec, folder, "first").start()
        real_wait = worker.proc.wait

        def wait_then_ctrl_c(*args, **kwargs):  # the reader's Ctrl-C, the moment it is reaped
            status = real_wait(*args, **kwargs)
            worker.proc.wait = real_wait
            signal.raise_signal(signal.SIGINT)
            return status

        worker.proc.wait = wait_then_ctrl_c
        try:
            worker.wait()
        except KeyboardInterrupt:
            pass
        worker.close()  # as kill_all_workers does after the interrupted call
        print(json.dumps(worker.proc.returncode))
        """
    )
    assert processes_still_mentioning("sleep", seconds) == []


def test_a_worker_that_fails_to_close_stops_neither_the_others_nor_the_trial_server(tmp_path):
    """The cleanup of an interrupted call closes every worker (`kill_all_workers`): one whose
    close fails must leave none of the others running, and the failure reaches the caller as
    the call's error, while the server lives on for the next call."""
    workers = []
    for role in ("first", "second", "third"):
        (tmp_path / role).mkdir()
        spec = lk.RunSpec("effect_first")
        create_files(tmp_path / role, spec.write_order.files, spec.write_order.receiver_dedupes)
        worker = order_worker(spec, tmp_path / role, role, pause_at=("effect",)).start()
        assert worker.wait_for_pause() == "effect"
        worker.close = failing_after(worker.close)
        workers.append(worker)
    with pytest.raises(OSError, match="closing it failed"):
        launcher.kill_all_workers(under=tmp_path)
    assert [worker.proc.returncode for worker in workers] == [-signal.SIGKILL] * 3
    assert not set(workers) & launcher._LIVE

    (tmp_path / "cleanup.py").write_text(
        "from labkit.bench import launcher\n"
        "real = launcher.kill_all_workers\n"
        "def failing():  # once\n"
        "    launcher.kill_all_workers = real\n"
        "    raise OSError('closing it failed')\n"
        "launcher.kill_all_workers = failing\n"
        "raise KeyboardInterrupt  # the call interrupted: its cleanup fails\n"
    )
    trial_server = server.call("os:getpid")
    with pytest.raises(server.ServerError, match="^OSError: closing it failed$"):
        server.call("runpy:run_path", path_name=str(tmp_path / "cleanup.py"))
    assert server.call("os:getpid") == trial_server  # the same server answers the next call


def failing_after(close):
    """`close`, which then fails as if closing the worker had."""

    def close_then_fail():
        close()
        raise OSError("closing it failed")

    return close_then_fail


def test_a_ctrl_c_while_a_spare_is_taken_leaks_no_descriptor(tmp_path):
    """A Ctrl-C that came while a spare was taken for a worker is raised once the spare is the
    worker's: it once landed before the spare got its job, and the job pipe's end, which only
    handing the job closes, stayed open in the trial server, one more at each such Ctrl-C."""
    counts = run_python(
        f"""
        import json, os, signal
        from labkit.bench import launcher, spares

        launcher.FORKING_ALLOWED = True  # as in the trial server: this process forks the spares
        spares.refill()
        before = len(os.listdir("/proc/self/fd"))
        real_take = spares.take

        def take_then_ctrl_c():  # the reader's Ctrl-C, as the spare is taken
            spare = real_take()
            signal.raise_signal(signal.SIGINT)
            return spare

        spares.take = take_then_ctrl_c
        entry = "labkit.studies.commit_window.worker:run_step"
        worker = launcher.WorkerProcess({str(tmp_path)!r}, "first", entry, {{}}, start_mode="fork")
        try:
            worker.start()
        except KeyboardInterrupt:
            pass
        spares.take = real_take
        launcher.kill_all_workers()
        spares.refill()  # as many spares as before, each with its three pipe ends
        print(json.dumps([before, len(os.listdir("/proc/self/fd"))]))
        spares.drop()
        """
    )
    assert counts[1] == counts[0]


def test_a_ctrl_c_that_came_before_its_call_began_leaves_ctrl_c_held_after_it():
    """A Ctrl-C that reached the server between reading a call and running it (the reader
    pressed it at once) interrupts that call; the server must hold Ctrl-C back again after,
    or the next one lands outside any call, where nothing catches it, and ends the server."""
    held = run_python(
        """
        import json, os, signal
        from labkit.bench.server import interruptible

        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # as the server runs
        os.kill(os.getpid(), signal.SIGINT)  # pending when the call begins
        try:
            interruptible(lambda: "ran to its end", stale_interrupt=False)
        except KeyboardInterrupt:
            pass
        print(json.dumps(signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])))
        """
    )
    assert held is True


def test_a_ctrl_c_just_before_a_hold_is_raised_before_it_and_leaves_nothing_held():
    """Python raises a Ctrl-C that came just before `ctrl_c_held` from the call that blocks
    SIGINT, once it is blocked: the hold once ended there, before its `try`, and left SIGINT
    blocked for good (a kernel that no Ctrl-C could interrupt any more)."""
    held = run_python(
        """
        import json, signal
        from labkit.bench.ctrl_c import ctrl_c_held

        real = signal.pthread_sigmask
        ran = []

        def block_then_ctrl_c(how, mask):  # as Python does with a SIGINT that just came
            previous = real(how, mask)
            if how == signal.SIG_BLOCK and signal.SIGINT in mask:
                signal.pthread_sigmask = real
                raise KeyboardInterrupt
            return previous

        signal.pthread_sigmask = block_then_ctrl_c
        try:
            with ctrl_c_held():
                ran.append("the held lines")
        except KeyboardInterrupt:
            pass
        signal.pthread_sigmask = real
        print(json.dumps([ran, signal.SIGINT in real(signal.SIG_BLOCK, [])]))
        """
    )
    assert held == [[], False]


def test_a_ctrl_c_as_the_trial_server_is_started_leaves_no_server_running():
    """A Ctrl-C in the kernel the moment the server's process is started (Python raises it
    inside Popen as Popen waits for the exec, or right after) must kill that server: it once
    went on starting, unknown to anyone, with its spares, for as long as its start took."""
    left = run_python(
        """
        import json, os, signal, subprocess
        from labkit.bench import server

        started = []

        class StartedThenCtrlC(subprocess.Popen):  # the reader's Ctrl-C, as it is started
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                started.append(self.pid)
                signal.raise_signal(signal.SIGINT)

        server.subprocess.Popen = StartedThenCtrlC
        try:
            server.Server()
        except KeyboardInterrupt:
            pass
        try:
            pid, _ = os.waitpid(started[0], os.WNOHANG)
            left = "running" if pid == 0 else "unreaped"
            os.killpg(started[0], signal.SIGKILL)
        except ChildProcessError:
            left = "killed and reaped"
        print(json.dumps(left))
        """
    )
    assert left == "killed and reaped"


def test_a_ctrl_c_handed_to_another_thread_is_still_held_until_the_block_ends():
    """In a process with threads (a kernel has several) a SIGINT that the main thread blocks
    goes to another thread, and Python still raises it in the main thread, inside the block:
    blocking alone once let it cut the server's start in two (found by the Ctrl-C-at-a-stage
    test of test_process_safety, whose watcher thread pressed it)."""
    seen = run_python(
        """
        import json, os, signal, threading
        from labkit.bench.ctrl_c import ctrl_c_held

        inside, pressed, ran = threading.Event(), threading.Event(), []

        def another_thread():  # started before the block: SIGINT is not blocked in it
            inside.wait()
            os.kill(os.getpid(), signal.SIGINT)
            pressed.set()

        threading.Thread(target=another_thread).start()
        try:
            with ctrl_c_held():
                inside.set()
                pressed.wait()
                for line in range(100):
                    ran.append(line)
        except KeyboardInterrupt:
            ran.append("interrupted after")
        handler = signal.getsignal(signal.SIGINT) is signal.default_int_handler
        blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
        print(json.dumps([len(ran), ran[-1], handler, blocked]))
        """
    )
    assert seen == [101, "interrupted after", True, False]


def test_a_ctrl_c_as_a_workers_pidfd_is_opened_leaks_no_descriptor(tmp_path):
    """The descriptor that tells a worker has exited (a pidfd) is the worker's as soon as it
    is opened: a Ctrl-C right after once lost it, one descriptor more at each such Ctrl-C."""
    counts = run_python(
        f"""
        import json, os, signal
        from pathlib import Path
        import labkit as lk
        from labkit.bench import fork_server, launcher
        from labkit.studies.commit_window.runs import order_worker
        from labkit.studies.commit_window.stores import create_files

        folder = Path({str(tmp_path)!r})
        spec = lk.RunSpec("effect_first")
        create_files(folder, spec.write_order.files, spec.write_order.receiver_dedupes)
        fork_server.fork_server_here()  # its socket is kept open, as it serves the next worker
        before = len(os.listdir("/proc/self/fd"))
        real_pidfd = launcher.pidfd_or_none

        def pidfd_then_ctrl_c(pid):  # the reader's Ctrl-C, the moment it is opened
            fd = real_pidfd(pid)
            launcher.pidfd_or_none = real_pidfd
            signal.raise_signal(signal.SIGINT)
            return fd

        launcher.pidfd_or_none = pidfd_then_ctrl_c
        try:
            order_worker(spec, folder, "first", pause_at=("effect",)).start()
        except KeyboardInterrupt:
            pass
        launcher.kill_all_workers()
        print(json.dumps([before, len(os.listdir("/proc/self/fd"))]))
        """
    )
    assert counts[1] == counts[0]


def test_a_ctrl_c_as_the_answer_is_read_neither_hangs_the_caller_nor_costs_the_server():
    """A Ctrl-C in the kernel just after the call's answer was read from the server (as it is
    decoded): the caller once interrupted the call anyway, and waited for an answer the server
    had given already, until a second Ctrl-C killed the server."""
    seen = run_python(
        """
        import json, os, threading
        from labkit.bench import server

        first = server.call_on("light", "os:getpid")
        threading.Timer(20, lambda: (print(json.dumps("hung"), flush=True), os._exit(0))).start()
        real_loads = json.loads
        armed = [True]

        def answer_then_ctrl_c(line):  # the reader's Ctrl-C, as the answer is decoded
            message = real_loads(line)
            if "result" in message and armed.pop():
                raise KeyboardInterrupt
            return message

        json.loads = answer_then_ctrl_c
        try:
            server.call_on("light", "os:getpid")
        except KeyboardInterrupt:
            pass
        json.loads = real_loads
        print(json.dumps(server.call_on("light", "os:getpid") == first), flush=True)
        os._exit(0)
        """
    )
    assert seen is True


def test_a_ctrl_c_handled_in_another_thread_interrupts_a_call_that_reports_nothing_meanwhile():
    """A call with no progress to report, such as a step-mode run waiting for "continue": a
    Ctrl-C whose handler runs in another thread (on Linux, often the one that sent it) left the
    caller asleep in its read of the server's reply, until the call answered, if ever."""
    seen = run_python(
        """
        import faulthandler, json, signal, threading, time
        from pathlib import Path
        from labkit.bench import server

        faulthandler.dump_traceback_later(30, exit=True)  # a hang fails, saying where it was
        pid = server.call_on("light", "os:getpid")

        def comm(pid):
            try:
                return Path(f"/proc/{pid}/comm").read_text()
            except OSError:  # gone meanwhile
                return ""

        def sleeping():  # the call's own child: it waits now, with nothing to say until it ends
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            return any(comm(child) == "sleep\\n" for child in children)

        def press_ctrl_c_once_the_call_waits():
            while not sleeping():
                time.sleep(0.002)
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # handled here, not in main

        threading.Thread(target=press_ctrl_c_once_the_call_waits).start()
        try:
            server.call_on("light", "subprocess:run", args=["sleep", "60"])
            outcome = "answered"
        except KeyboardInterrupt:
            outcome = "interrupted"
        print(json.dumps([outcome, server.call_on("light", "os:getpid") == pid]))
        """
    )
    assert seen == ["interrupted", True]


def test_a_ctrl_c_as_a_reply_is_read_loses_no_byte_of_it():
    """A Ctrl-C the moment the bytes of the server's replies are read: they are kept, and the
    lines come next time whole and in order, so that the interrupted call's answer is found."""
    seen = run_python(
        """
        import json, os, signal
        from labkit.bench.reply_lines import ReplyLines

        r, w = os.pipe()
        os.write(w, b'{"progress": [1, 2, null]}\\n{"result": 3}\\n')
        os.close(w)
        real_read = os.read

        def read_then_ctrl_c(fd, size):
            chunk = real_read(fd, size)
            signal.raise_signal(signal.SIGINT)
            return chunk

        replies, os.read = ReplyLines(r), read_then_ctrl_c
        try:
            replies.next()
            interrupted = False
        except KeyboardInterrupt:
            interrupted = True
        os.read = real_read
        print(json.dumps([interrupted, replies.next(), replies.next(), replies.next()]))
        """
    )
    assert seen == [True, '{"progress": [1, 2, null]}\n', '{"result": 3}\n', ""]


def test_a_caller_that_holds_more_than_1024_descriptors_still_hears_its_server_and_workers():
    """A long-lived kernel can hold many files: the server's pipe, a worker's pipes and pidfd
    then have numbers past `select`'s limit (1024), which `poll` has not. Lesson 1's crash run
    waits on its workers from the caller itself."""
    seen = run_python(
        """
        import json, os, resource
        from labkit.bench import server
        from labkit.studies.commit_window.runs import run

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
        held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
        pid = server.call_on("light", "os:getpid")
        again = server.call_on("light", "os:getpid")
        crash = run("effect_first", "effect").outcome
        print(json.dumps([server._light.replies.pipe > 1024, pid == again, crash]))
        """
    )
    assert seen == [True, True, "duplicate"]
