"""Steps that start a program. `step` tells the ops team of its receipt by running one, as a
shell script would. `spawned` hands work to a process of multiprocessing's "spawn" kind: a new
Python, started by `_posixsubprocess.fork_exec` itself, not through `subprocess`."""

import multiprocessing
import os
import subprocess

from labkit.studies.commit_window.stores import KEY, PAYLOAD


def step(control, effect, gate):
    with effect:
        effect.add_receipt_once(KEY, PAYLOAD)
    subprocess.run(["echo", "receipt", KEY], stdout=subprocess.DEVNULL, check=True)
    with control:
        control.mark_done()


def spawned(control, effect, gate):
    with effect:
        effect.add_receipt_once(KEY, PAYLOAD)
    helper = multiprocessing.get_context("spawn").Process(target=os.getpid)
    helper.start()
    helper.join()
    with control:
        control.mark_done()
