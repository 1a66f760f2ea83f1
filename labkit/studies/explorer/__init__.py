"""The crash explorer (lesson 9): point the lab at your own step or graph, and it crashes it at
every crash point it passes, then checks what each crash leaves after recovery.

As ALICE (OSDI 2014) does for file systems and CrashMonkey for storage: `record` numbers every
crash point of one run without a crash (each commit to any SQLite file, each write to a file of
the run and each fsync, each checkpointer put and put_writes, with the reader's source line:
`watches` finds them, `states` reads what the files hold);
`replay` kills a worker at each distinct crash state and recovers in a fresh one; `checker`
judges each state (by default: every effect of the run without a crash exactly once, with the
same contents, the run finished); `report` is the matrix. `target` says where
the reader's code is loaded from (only ever in a worker); `steps`, `graphs` and `callables` are
the worlds it runs in (a lesson 2 step, a LangGraph graph, any run(checkpointer, resume));
`worker` is the process of each role; `services` names a call into the lab's services as
its crash point (lesson 6's claims); `stepping` replays a step with a pause at each crash
point; `lab` names the lab's own studies as targets; `placement` explores study 004's
advice (one effect first, in the middle or last, under each mode); `readers_writes` lends the
watches of a reader's writes to lessons 2 and 5's judges.
"""
