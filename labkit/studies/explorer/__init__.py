"""The crash explorer (lesson 9): point the lab at your own step or graph, and it crashes it at
every crash point it passes, then checks what each crash leaves after recovery.

As ALICE (OSDI 2014) does for file systems and CrashMonkey for storage: `record` numbers every
crash point of one run without a crash (each commit, fsync, checkpointer put and put_writes,
with the reader's source line); `replay` kills a worker at each and recovers in a fresh one;
`checker` judges each state (by default: every effect of the run without a crash exactly once,
the run finished); `report` is the matrix. `target` says where the reader's code is loaded
from (only ever in a worker); `steps` and `graphs` are the two worlds it runs in; `worker` is
the process of each role; `lab` names the lab's own studies as targets.
"""
